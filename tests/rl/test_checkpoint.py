"""The optimizer state in a checkpoint: whole and by parameter name, so that a run resumes in
another process layout; positional state from older checkpoints still loads."""

from __future__ import annotations

import torch

from atrl.rl.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)

    def save_pretrained(self, directory, state_dict=None) -> None:
        from safetensors.torch import save_file

        directory.mkdir(parents=True, exist_ok=True)
        save_file(state_dict or self.state_dict(), str(directory / "model.safetensors"))


def _trained(seed: int = 0) -> tuple[Tiny, torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    torch.manual_seed(seed)
    model = Tiny()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    model.second(model.first(torch.randn(5, 4))).pow(2).sum().backward()
    optimizer.step()
    scheduler.step()
    return model, optimizer, scheduler


def _fresh() -> tuple[Tiny, torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    model = Tiny()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)


def _assert_same_state(loaded: torch.optim.Optimizer, saved: torch.optim.Optimizer) -> None:
    a, b = loaded.state_dict()["state"], saved.state_dict()["state"]
    assert a.keys() == b.keys() and len(a) == 4
    for index in a:
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(a[index][key], b[index][key]), (index, key)


def test_the_optimizer_state_is_saved_whole_by_parameter_name_and_resumes(tmp_path):
    model, optimizer, scheduler = _trained()
    save_checkpoint(tmp_path, 1, model, None, optimizer, scheduler)
    state = torch.load(latest_checkpoint(tmp_path) / "trainer_state.pt", weights_only=False)
    assert set(state["optimizer_by_name"]["state"]) == {"first.weight", "first.bias", "second.weight", "second.bias"}
    assert "optimizer" not in state
    again, again_optimizer, again_scheduler = _fresh()
    assert load_checkpoint(latest_checkpoint(tmp_path), again, again_optimizer, again_scheduler) == 1
    _assert_same_state(again_optimizer, optimizer)
    assert torch.equal(again.first.weight, model.first.weight)


def test_a_checkpoint_with_positional_optimizer_state_still_loads(tmp_path):
    model, optimizer, scheduler = _trained()
    path = save_checkpoint(tmp_path, 1, model, None, optimizer, scheduler)
    state = torch.load(path / "trainer_state.pt", weights_only=False)
    del state["optimizer_by_name"]
    state["optimizer"] = optimizer.state_dict()  # the layout of checkpoints written before
    torch.save(state, path / "trainer_state.pt")
    again, again_optimizer, again_scheduler = _fresh()
    load_checkpoint(path, again, again_optimizer, again_scheduler)
    _assert_same_state(again_optimizer, optimizer)


def test_without_the_optimizer_only_weights_schedule_and_step_load(tmp_path):
    model, optimizer, scheduler = _trained()
    path = save_checkpoint(tmp_path, 1, model, None, optimizer, scheduler)
    again, again_optimizer, again_scheduler = _fresh()
    assert load_checkpoint(path, again, again_optimizer, again_scheduler, with_optimizer=False) == 1
    assert again_optimizer.state_dict()["state"] == {} and again_scheduler.last_epoch == 1
    assert torch.equal(again.second.bias, model.second.bias)


def test_milestone_checkpoints_outlive_keep_and_latest_stays_the_newest(tmp_path):
    model, optimizer, scheduler = _trained()
    for step in range(1, 8):
        save_checkpoint(tmp_path, step, model, None, optimizer, scheduler, keep=1, keep_every=3)
    kept = sorted(p.name for p in (tmp_path / "checkpoints").glob("step_*"))
    assert kept == ["step_000003", "step_000006", "step_000007"]
    assert latest_checkpoint(tmp_path).name == "step_000007"
    for step in range(8, 10):  # without milestones only the newest `keep` stay
        save_checkpoint(tmp_path / "plain", step, model, None, optimizer, scheduler, keep=1)
    assert [p.name for p in (tmp_path / "plain" / "checkpoints").glob("step_*")] == ["step_000009"]
