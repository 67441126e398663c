"""JupyterHub configuration for a WORKSHOP: a starting point to copy onto the hub machine.

Why a real authenticator: a hub is reachable by everyone on its network, and DummyAuthenticator
(used by the local test, hub/jupyterhub_config.py) lets anyone in as any user, including an
instructor's account, with code execution on the machine. Here each learner gets an account of
their own:

- SharedPasswordAuthenticator (built into JupyterHub >= 5): the instructor writes one room
  password on the board; each learner picks a user name; admins use a separate password.
  Change both passwords for every workshop, and serve the hub over HTTPS (see below).
- For a course run by an institution, prefer its single sign-on: `pip install oauthenticator`
  and use e.g. GitHubOAuthenticator or GenericOAuthenticator with an allow list.

Why systemd (or containers) rather than the test's SimpleLocalProcessSpawner: learners must not
read each other's files, and one runaway kernel must not take the whole machine's memory.
`pip install jupyterhub-systemdspawner` runs each learner as their own Unix user with a memory
limit (README's sizing table gives the number to set); DockerSpawner is the container
alternative. The Littlest JupyterHub (TLJH) sets all of this up on one machine in one command.

With dynamic users, each learner's home is /var/lib/private/NAME, so the instructor's room view
is `python -m course progress --collect /var/lib/private` (run as root).

Why a start hook: a learner who edits the lessons inside the git clone would have nbgitpuller
merge upstream changes into their notebooks' JSON (`git merge -Xours`: a mix of theirs and the
new version). As `make lab` does on a laptop, each learner works in `workspace/` instead
(untracked, so no pull ever touches it): START_HOOK runs before each learner's server starts,
clones the course once if it is not there yet, and runs the clone's scripts/lab_workspace.py,
which copies `learner/` into `workspace/` and never overwrites a notebook the learner edited (a
lesson changed upstream lands beside it as NN_name.new.ipynb). The links of
`python hub/local_hub.py links` open the workspace copy.

Run on the hub machine, as root, with the course installed in the hub's Python environment:
    COURSE_ROOM_PASSWORD=... COURSE_ADMIN_PASSWORD=... jupyterhub -f workshop_config.py
"""

import os

from course.frontends import LEARNER_DIR, REPOSITORY, WORKSPACE_DIR

CORES_PER_LEARNER = 1.0  # README's sizing table: cores per learner as well as memory
THREADS = max(1, int(CORES_PER_LEARNER))
CACHE_DIR = "/srv/pytorch-internals-course"
BRANCH = "main"  # the branch the links of `python hub/local_hub.py links` pull
FOLDER = REPOSITORY.rstrip("/").rsplit("/", 1)[-1]  # the clone, where nbgitpuller puts it

# Runs in the server's folder (the learner's home) as `sh -c START_HOOK course-start FOLDER
# REPOSITORY BRANCH LEARNER WORKSPACE SERVER ARGS...`. A failure (offline, say) is written to the
# server's log and the server starts anyway: a lesson is still one link click away.
START_HOOK = """
folder=$1 repository=$2 branch=$3 learner=$4 workspace=$5
shift 5
if [ ! -d "$folder/.git" ]; then
    git clone --quiet --branch "$branch" "$repository" "$folder" &&
        git -C "$folder" config user.email course-start@localhost &&
        git -C "$folder" config user.name course-start ||
        echo "course-start: could not clone $repository into $folder" >&2
fi
if [ -d "$folder/$learner" ]; then
    python3 "$folder/scripts/lab_workspace.py" \
        --learner "$folder/$learner" --workspace "$folder/$workspace" ||
        echo "course-start: could not bring $folder/$workspace up to date" >&2
fi
exec "$@"
"""

c = get_config()  # noqa: F821 -- JupyterHub defines get_config in the config file's namespace

c.JupyterHub.bind_url = "http://:8000"  # put HTTPS in front, or set ssl_cert / ssl_key below
# c.JupyterHub.ssl_cert = "/etc/letsencrypt/live/HOST/fullchain.pem"
# c.JupyterHub.ssl_key = "/etc/letsencrypt/live/HOST/privkey.pem"

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["COURSE_ROOM_PASSWORD"]
c.SharedPasswordAuthenticator.admin_password = os.environ["COURSE_ADMIN_PASSWORD"]
c.Authenticator.admin_users = {"instructor"}
c.Authenticator.allow_all = True  # anyone with the room password; list names to restrict

c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
c.SystemdSpawner.dynamic_users = True  # a fresh Unix user per learner, no accounts to create
c.SystemdSpawner.mem_limit = "2G"  # README's sizing table: per-learner peak plus headroom
c.SystemdSpawner.cpu_limit = CORES_PER_LEARNER
c.Spawner.default_url = "/lab"
c.Spawner.cmd = [
    "sh",
    "-c",
    START_HOOK,
    "course-start",
    FOLDER,
    REPOSITORY,
    BRANCH,
    LEARNER_DIR,
    WORKSPACE_DIR,
    "jupyterhub-singleuser",
]
c.Spawner.environment = {
    # torch sizes its thread pool from these: one math thread per core of the learner's share, so
    # a room of training cells does not oversubscribe the machine (README's sizing: cores too)
    "OMP_NUM_THREADS": str(THREADS),
    "MKL_NUM_THREADS": str(THREADS),
    # notebook 06's kernel sources and the C++ builds, read by every learner: fill it once, as
    # root, while online: `COURSE_CACHE_DIR=/srv/pytorch-internals-course make fetch-sources`
    "COURSE_CACHE_DIR": CACHE_DIR,
}
# Stop servers idle for an hour (pip install jupyterhub-idle-culler).
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": ["python3", "-m", "jupyterhub_idle_culler", "--timeout=3600"],
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
