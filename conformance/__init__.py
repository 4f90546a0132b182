"""toolreg-conformance: the conformance kit."""
