"""Server-rendered pages of the dashboard (one module per area)."""
