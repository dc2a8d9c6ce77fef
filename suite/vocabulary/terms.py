"""Closed sets of values the pages define, shared by the reference, the generators and the reader."""

from __future__ import annotations

#: Content levels from least to most strict (session page, contentLevel; ASR-153, ASR-164).
CONTENT_LEVELS = ("full", "redacted", "metadata")
