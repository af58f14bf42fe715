"""Pure core: events, the trace they fold into, presets, capabilities, inline-tag splitting.

Nothing here does I/O or knows about HTTP or notebooks.
"""
