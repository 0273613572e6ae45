"""What a verdict tells the agent: the failure classes, the diagnosis of a wrong result or a
timeout, and the feedback text built from a verdict."""
