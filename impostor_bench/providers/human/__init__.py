"""A person in a seat: ``human/web`` (a local page), recorded as ``human/<participant>``."""
