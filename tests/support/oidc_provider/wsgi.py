import os

from django.core.management import call_command
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.support.oidc_provider.settings")
application = get_wsgi_application()
# the database is new (a temporary folder of tests.support.oidc_server): its tables, from the models, before serving
call_command("migrate", "--run-syncdb", "--noinput", "-v", "0")
