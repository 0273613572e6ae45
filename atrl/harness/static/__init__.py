"""Stage 2, static checks: judge a candidate's source by its syntax tree before anything runs.

The entry point is `atrl.harness.static.checks.check_static`; each other module holds one group of rules."""
