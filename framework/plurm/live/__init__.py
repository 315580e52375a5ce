"""Live mode: what the controller daemon keeps and sends (codec, durable state store)."""
