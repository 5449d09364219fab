"""Generic helpers every layer may use: atomic writes, JSON text, the one redactor, signals, shards."""
