"""Shared servers: who holds which GPU, and picking the GPUs with the most free memory."""
