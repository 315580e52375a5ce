"""The simulation driver: a simulated clock, an executor that pretends, and session replay."""
