"""Sweeps: one prompt set across presets and models, as rows of a table (issue 26)."""
