"""The replay cache and the trace log: one SQLite file shared by every kernel of the user.

``keys`` says what makes two requests the same, ``recording`` turns a run's events into a
timeline and back, ``db`` keeps both (and the log) in SQLite. ``Run`` ties them together.
"""
