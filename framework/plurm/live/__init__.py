"""Live mode: what the controller daemon serves over the network."""
