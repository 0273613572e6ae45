"""The judging stages that run inside a worker: load ► compile ► correctness ► profile.

`atrl.harness.stages.judge.judge` runs them in order and returns the verdict."""
