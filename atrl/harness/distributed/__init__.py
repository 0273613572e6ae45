"""The judge on a Ray fleet: `RayHarness` on the driver, judge actors holding worker pools, and the
dispatch of jobs over them (extra: `pip install -e ".[ray]"`)."""
