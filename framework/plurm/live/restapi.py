"""slurmrestd's API for Slurm 22.05 (``/slurm/v0.0.38/``), served by ``plurmctld`` beside its
RPC: ping, diag, jobs, job/submit, job/{id} (GET and DELETE), nodes and partitions, with
slurmrestd's JSON (:mod:`.rest` renders and parses it).

Who asks: slurmrestd takes the user from ``X-SLURM-USER-NAME`` with a token in
``X-SLURM-USER-TOKEN``. With a token plugin loaded (``AuthAltTypes=auth/jwt``) every request
needs a token it accepts for the user named (root's and SlurmUser's tokens may name
anyone); without one, only ``auth/none`` (trusted, single-user setups) takes the user name
header at its word, and any other AuthType refuses every request (nothing could tell who
asks). With ``PrivateData=jobs`` a user sees only their own jobs.
"""

from __future__ import annotations

import logging
import pwd
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from plurm.controller import RequestError
from plurm.errors import AuthError
from plurm.live import rest
from plurm.live.rpc import encode

if TYPE_CHECKING:
    from aiohttp import web

    from plurm.live.ctld import ControllerDaemon

__all__ = ["add_rest_routes"]

PREFIX = "/slurm/v0.0.38"

logger = logging.getLogger(__name__)


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def add_rest_routes(app: web.Application, daemon: ControllerDaemon) -> None:
    from aiohttp import web

    def answer(value: Any, status: int = 200) -> web.Response:
        return web.Response(body=encode(value), status=status, content_type="application/json")

    def who(request: web.Request) -> tuple[int, int] | None:
        name = request.headers.get("X-SLURM-USER-NAME", "")
        token = request.headers.get("X-SLURM-USER-TOKEN")
        if daemon.plugins.implements("auth_token_verify"):
            if not token or len(token) > 16384:
                return None
            try:
                verified = daemon.plugins.auth_token_verify(token, name)
            except AuthError as error:
                logger.warning("rest: token refused for user %r: %s", name, error)
                return None
            if verified is None:
                return None
            name = verified
        elif daemon.config.auth_type != "auth/none":
            return None  # no token plugin: nothing here can tell who asks
        if not name:
            return None
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            return None
        return entry.pw_uid, entry.pw_gid

    def handler(
        run: Callable[[web.Request, tuple[int, int]], Any],
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def serve(request: web.Request) -> web.Response:
            ids = who(request)
            if ids is None:
                return answer(rest.error_response([rest.lookup_error(1007)]), 401)
            try:
                result = run(request, ids)
            finally:
                daemon.commit()
            return result if isinstance(result, web.Response) else answer(result)

        return serve

    def ping(request: web.Request, ids: tuple[int, int]) -> Any:
        return rest.ping_response(daemon.settings.ctld_address, True)

    def diag(request: web.Request, ids: tuple[int, int]) -> Any:
        return rest.diag_response(daemon.statistics())

    def jobs(request: web.Request, ids: tuple[int, int]) -> Any:
        controller = daemon.controller
        return rest.jobs_response(daemon.jobs_for(ids[0]), controller.cluster, controller.now)

    def job(request: web.Request, ids: tuple[int, int]) -> Any:
        text = request.match_info["job_id"]
        controller = daemon.controller
        found = (
            controller.cluster.jobs.get(int(text)) if text.isascii() and text.isdigit() else None
        )
        if found is None or not daemon.access.sees(ids[0], found.request.uid, found.account):
            return answer(rest.job_not_found(text), 404)
        return rest.jobs_response([found], controller.cluster, controller.now)

    def cancel(request: web.Request, ids: tuple[int, int]) -> Any:
        text = request.match_info["job_id"]
        if not (text.isascii() and text.isdigit() and len(text) < 20):
            return answer(rest.job_not_found(text), 404)
        job_id = int(text)
        try:
            job = daemon.controller.job(job_id)
            if not daemon.access.may_act(ids[0], job.request.uid, job.account):
                raise RequestError("Access/permission denied")
            daemon.controller.cancel(job_id)
        except RequestError as error:
            return answer(rest.cancel_response([{"error": error.message, "errno": 2017}]), 500)
        return rest.cancel_response()

    async def submit(request: web.Request) -> web.Response:
        ids = who(request)
        if ids is None:
            return answer(rest.error_response([rest.lookup_error(1007)]), 401)
        body = await request.read()
        try:
            parsed = rest.parse_job_submit(body)
        except rest.RestError as error:
            return answer(error.response(), 500)
        uid, gid = ids
        job_request = attrs.evolve(
            parsed.request,
            script=parsed.script,
            environment=tuple(f"{k}={v}" for k, v in parsed.environment),
            stderr=parsed.stderr,
            uid=uid,
            gid=gid,
            user=_name(uid),
        )
        try:
            job_id = daemon.submit_request(job_request)
        except RequestError as error:
            return answer(rest.error_response([rest.submit_error(2017, error.message)]), 500)
        finally:
            daemon.commit()
        return answer(rest.submit_response(job_id))

    def nodes(request: web.Request, ids: tuple[int, int]) -> Any:
        from plurm.commands.client import cpus_in_use

        view = daemon.client.view()
        return rest.nodes_response(view.config.node_names, view.cluster, cpus_in_use(view))

    def partitions(request: web.Request, ids: tuple[int, int]) -> Any:
        cluster = daemon.controller.cluster
        return rest.partitions_response(cluster.partitions.values(), cluster)

    app.router.add_get(f"{PREFIX}/ping", handler(ping))
    app.router.add_get(f"{PREFIX}/diag", handler(diag))
    app.router.add_get(f"{PREFIX}/jobs", handler(jobs))
    app.router.add_get(f"{PREFIX}/job/{{job_id}}", handler(job))
    app.router.add_delete(f"{PREFIX}/job/{{job_id}}", handler(cancel))
    app.router.add_post(f"{PREFIX}/job/submit", submit)
    app.router.add_get(f"{PREFIX}/nodes", handler(nodes))
    app.router.add_get(f"{PREFIX}/partitions", handler(partitions))
