# The Fairway image: web (gunicorn), worker, beat, the Kubernetes adapter and one-off commands (migrate) all run
# from it; docker-compose.yml and deploy/kubernetes/ choose the command. Runs as a non-root user, and with a
# read-only root file system: all it writes goes to FAIRWAY_VAR_DIR (a volume) and /tmp.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    FAIRWAY_VAR_DIR=/app/var \
    STATIC_ROOT=/app/static \
    DJANGO_SETTINGS_MODULE=controlplane.settings

WORKDIR /app
# Every package of the product, as pyproject.toml lists them (tests/test_packaging.py compares the two).
COPY pyproject.toml README.md manage.py ./
COPY engine engine
COPY core core
COPY planning planning
COPY controlplane controlplane
COPY quotas quotas
COPY scheduling scheduling
COPY frontend frontend
COPY security security
COPY changerequests changerequests
COPY identity identity

# The static files are collected while building (the key below exists only for that command), so that the
# running container writes nothing outside its var/ volume.
RUN pip install . \
 && SECRET_KEY=collectstatic-only FAIRWAY_SECRET_KEYS=MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI= FAIRWAY_VAR_DIR=/tmp/build-var \
    python manage.py collectstatic --noinput -v0 \
 && rm -rf /tmp/build-var \
 && groupadd --system --gid 10001 fairway \
 && useradd --system --uid 10001 --gid fairway --home-dir /app --no-create-home --shell /usr/sbin/nologin fairway \
 && mkdir -p /app/var && chown fairway:fairway /app/var

USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
CMD ["gunicorn", "controlplane.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", \
     "--worker-tmp-dir", "/tmp", "--control-socket", "/tmp/gunicorn.ctl"]
