"""The xcplab web API (FastAPI) under /api/v1."""
