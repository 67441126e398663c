"""JupyterHub configuration for the LOCAL TEST HUB only (`make hub`, `make test-hub`).

DummyAuthenticator lets anyone in as anyone who knows one shared test password: fine on
127.0.0.1 for a test, never on a network. For a workshop use hub/workshop_config.py (a real
authenticator and per-learner accounts); README's "Workshops on a JupyterHub" says how.

hub/local_hub.py starts the hub with this file and these environment variables:
COURSE_HUB_STATE (a folder for the database, secrets and learners' homes), COURSE_HUB_PORT (the
proxy's public port; the hub API and the proxy API take the next two), COURSE_HUB_PROXY (the
configurable-http-proxy executable from npm), COURSE_HUB_TOKEN (an API token for the test's
service), COURSE_HUB_PASSWORD (the shared test password).
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 -- JupyterHub defines get_config in the config file's namespace

state = Path(os.environ["COURSE_HUB_STATE"])
port = int(os.environ["COURSE_HUB_PORT"])
venv_bin = Path(sys.executable).parent

# Loopback only: nothing outside this machine can reach the test hub.
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = port
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = port + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
c.ConfigurableHTTPProxy.command = [os.environ["COURSE_HUB_PROXY"]]
c.ConfigurableHTTPProxy.should_start = True

c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every learner's server
c.JupyterHub.cleanup_proxy = True

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ["COURSE_HUB_PASSWORD"]
c.Authenticator.allow_all = True

# Every learner's server runs as this user, in a home of its own under the state folder.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(state / "homes" / "{username}")
c.Spawner.cmd = [str(venv_bin / "jupyterhub-singleuser")]
c.Spawner.args = ["--allow-root"] if os.geteuid() == 0 else []
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# One math thread per learner: with many learners per core, more threads only contend.
c.Spawner.environment = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# The test's own service: starts learners' servers and runs their notebooks through the proxy.
c.JupyterHub.services = [{"name": "course-test", "api_token": os.environ["COURSE_HUB_TOKEN"]}]
c.JupyterHub.load_roles = [
    {
        "name": "course-test",
        "scopes": ["admin:users", "admin:servers", "access:servers"],
        "services": ["course-test"],
    }
]
