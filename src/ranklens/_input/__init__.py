"""Layer 3, the input: every accepted input form read, coerced and validated into one records type."""
