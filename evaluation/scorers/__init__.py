"""Scorers: accuracy of the capabilities against eval sets (``livekg eval ...``)."""
