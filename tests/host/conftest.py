"""The host stack's integration tests deploy their topologies through the netns backend."""

from topology import topology  # noqa: F401 - the shared fixture
