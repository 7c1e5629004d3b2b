"""Maintainer scripts: never installed with gpudoctor, never run at check time."""
