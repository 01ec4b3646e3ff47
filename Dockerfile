FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY controlplane controlplane
COPY quotas quotas
COPY scheduling scheduling
COPY frontend frontend
COPY manage.py ./
RUN pip install --no-cache-dir .
ENV PYTHONUNBUFFERED=1 FAIRWAY_VAR_DIR=/app/var
EXPOSE 8000
