"""The worker sandbox: isolated worker processes that run candidate code, their memory limits and
admission to a device, and what a worker's crash says about the candidate."""
