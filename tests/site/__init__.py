"""Tests of site."""
