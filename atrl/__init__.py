"""ATRL: compaction-aware reinforcement learning for agents that write Triton kernels."""

__version__ = "0.1.0"
