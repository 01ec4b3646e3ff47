"""Server-rendered pages of the dashboard, one module per page; each view reads the request, asks the
presenters (``frontend.presenters``) for what the page shows and renders it."""
