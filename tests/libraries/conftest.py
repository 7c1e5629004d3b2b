"""The real_libs fixture lives in tests/real_libs/fixtures.py (shared by every test folder)."""
