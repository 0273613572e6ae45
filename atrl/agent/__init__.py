"""The agent: prompts, multi-turn episodes with context compaction, trajectory records and IO."""

from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episodes
from atrl.agent.interfaces import Judge, Knowledge
from atrl.agent.records import Segment, Span, Trajectory, Turn
from atrl.agent.trajectory_io import read_trajectories, write_trajectories

__all__ = ["AgentConfig", "Judge", "Knowledge", "Segment", "Span", "Trajectory", "Turn", "read_trajectories",
           "run_episodes", "write_trajectories"]
