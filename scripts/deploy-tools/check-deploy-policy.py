#!/usr/bin/env python3
"""Project rules for the deployment files that schema validation cannot see.

    check-deploy-policy.py dockerfile ROOT
    check-deploy-policy.py compose    ROOT COMPOSE_CONFIG_JSON   (docker compose config --format json)
    check-deploy-policy.py k8s        ROOT RENDERED_YAML NAME    (kustomize build output)

Prints one FAIL line per problem and exits 1 if there is any. Needs PyYAML (k8s only).
"""
import glob
import json
import os
import re
import sys

SERVICE_MAIN = re.compile(r"^services/([a-z0-9-]+)/dist/main\.js$")
DISTRIBUTED_SERVICES = {"read-api": 8080, "credentials": 8081, "score-ingest": 8082, "notifier": 8083, "console": 8084}
# The console (decision 51) is a client of the other services' APIs: it needs no engine at all.
NEEDS_NO_ENGINE = {"console"}
# Those that serve recipients: their credential rate limit is shared in Redis.
NEEDS_REDIS = {"read-api", "notifier"}
# Decision 52: every service scales out; the autoscaled ones (the HPA owns their count) are these.
AUTOSCALED = {"read-api", "notifier"}
DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000
# The credentials of services run by others (the identity provider, the managed engines): only ever
# files from a mounted Secret (decision 53), never environment variables a crash report or
# `kubectl describe` can show.
FILE_ONLY_SECRETS = {"CONSOLE_OIDC_CLIENT_SECRET", "KAFKA_SASL_PASSWORD", "REDIS_PASSWORD", "MONGO_PASSWORD"}

problems = []


def fail(where, message):
    problems.append(f"{where}: {message}")


def finish(summary):
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        sys.exit(1)
    print(f"ok   {summary}")


def check_main_exists(root, where, command):
    """The command runs a service's compiled main: its TypeScript source must exist."""
    script = next((arg for arg in command or [] if arg.endswith(".js")), None)
    match = SERVICE_MAIN.match(script or "")
    if not match:
        fail(where, f"command {command} does not run services/<name>/dist/main.js")
        return None
    source = os.path.join(root, "services", match.group(1), "src", "main.ts")
    if not os.path.isfile(source):
        fail(where, f"runs {script}, but {os.path.relpath(source, root)} does not exist")
    return match.group(1)


def go_duration_seconds(text):
    """'15s', '1m0s', '500ms' (docker compose config --format json) -> seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)", str(text))
    return sum(float(value) * units[unit] for value, unit in parts)


# ---------------------------------------------------------------- Dockerfile

def check_dockerfile(root):
    text = open(os.path.join(root, "Dockerfile"), encoding="utf-8").read()
    logical = re.sub(r"\\\n", " ", text)
    lines = [line.strip() for line in logical.splitlines() if line.strip() and not line.strip().startswith("#")]
    where = "Dockerfile"

    workspaces = json.load(open(os.path.join(root, "package.json"), encoding="utf-8")).get("workspaces", [])
    for pattern in workspaces:
        for package_json in sorted(glob.glob(os.path.join(root, pattern, "package.json"))):
            ws = os.path.relpath(os.path.dirname(package_json), root)
            if f"COPY {ws}/package.json {ws}/" not in lines:
                fail(where, f"workspace {ws} has no 'COPY {ws}/package.json {ws}/' line: npm ci would not install it")

            if ws.split(os.sep)[0] in ("services", "tools"):
                # `tsc -b` alone builds the root tsconfig's references; `tsc -b A B` only A and B.
                projects = [line.split("&&")[0].split("tsc -b", 1)[1].split()
                            for line in lines if re.match(r"^RUN (npx )?tsc -b\b", line)]
                built = any(not args or ws in args for args in projects)
                if not built:
                    fail(where, f"{ws} is not compiled: add it to the 'RUN npx tsc -b ...' line")

    stages = [line for line in lines if line.upper().startswith("FROM ")]
    final = lines[lines.index(stages[-1]):] if stages else []
    if not any(re.match(r"^FROM \S+ AS runtime$", stage, re.I) for stage in stages[-1:]):
        fail(where, "the last stage must be the runtime stage (FROM ... AS runtime)")
    users = [line.split()[1] for line in final if line.upper().startswith("USER ")]
    if not users or users[-1].split(":")[0] not in ("1000", "node"):
        fail(where, "the runtime stage must end as the non-root node user (USER 1000:1000)")
    if not any(line.upper().startswith("ENTRYPOINT ") and "dumb-init" in line for line in final):
        fail(where, "the runtime stage needs an init as PID 1 (ENTRYPOINT dumb-init)")
    if not any(re.match(r"^ENV .*\bNODE_ENV=production\b", line) for line in final):
        fail(where, "the runtime stage must set NODE_ENV=production")
    expose = {port for line in final if line.upper().startswith("EXPOSE ") for port in line.split()[1:]}
    for port in sorted(str(port) for port in DISTRIBUTED_SERVICES.values()):
        if port not in expose:
            fail(where, f"EXPOSE is missing {port}")
    if any(line.upper().startswith("HEALTHCHECK ") for line in lines):
        fail(where, "no HEALTHCHECK: orchestrators probe /healthz and /readyz themselves")
    cmds = [line for line in final if line.upper().startswith("CMD ")]
    if not cmds or "services/embedded/dist/main.js" not in cmds[-1]:
        fail(where, "the default CMD must run the embedded runtime (services/embedded/dist/main.js)")
    for line in final:
        if line.upper().startswith("COPY ") and "--from=build" in line and "/out/" not in line:
            fail(where, f"the runtime stage copies more than the gathered dist folders: {line}")
    if not any("npm ci --omit=dev" in line for line in lines):
        fail(where, "production dependencies must be installed with npm ci --omit=dev")
    finish("Dockerfile: every workspace manifest copied, non-root user, init, NODE_ENV, ports, default command")


# ---------------------------------------------------------------- docker compose

def check_compose_engine_clients(where, environment):
    """A service reaches the engines as managed ones demand (decision 53): TLS and credentials, from files."""
    if str(environment.get("KAFKA_SSL", "")).lower() != "true" or not environment.get("KAFKA_SASL_MECHANISM"):
        fail(where, "reaches Kafka over TLS with SASL (KAFKA_SSL=true, KAFKA_SASL_MECHANISM)")
    if "MONGO_URL" in environment or not environment.get("MONGO_URL_FILE"):
        fail(where, "takes MONGO_URL (user and password in it) from a secret's file: MONGO_URL_FILE, not MONGO_URL")
    if "REDIS_URL" in environment and (
        not str(environment["REDIS_URL"]).startswith("rediss://") or not environment.get("REDIS_USERNAME")
    ):
        fail(where, "reaches Redis over TLS (rediss://) as an ACL user (REDIS_USERNAME)")


def check_compose_engines(services):
    """The engines take clients only over TLS with credentials: nothing in plaintext beyond a container's loopback."""
    kafka_env = (services.get("kafka") or {}).get("environment") or {}
    protocols = dict(entry.split(":", 1) for entry in str(kafka_env.get("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "")).split(",") if ":" in entry)
    for listener in str(kafka_env.get("KAFKA_LISTENERS", "")).split(","):
        name, _, address = listener.partition("://")
        if protocols.get(name, name) in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT") and not address.startswith("127.0.0.1:"):
            fail("docker-compose.yml: kafka", f"listener {listener} takes clients without TLS and SASL beyond the container's loopback")
    redis_command = [str(part) for part in (services.get("redis") or {}).get("command") or []]
    plaintext_port = redis_command[redis_command.index("--port") + 1] if "--port" in redis_command[:-1] else "6379"
    if "--aclfile" not in redis_command or "--tls-port" not in redis_command or plaintext_port != "0":
        fail("docker-compose.yml: redis", "listens on TLS only (--port 0, --tls-port) with its users in an ACL file (--aclfile)")
    mongo_command = [str(part) for part in (services.get("mongo") or {}).get("command") or []]
    if "requireTLS" not in mongo_command or not ((services.get("mongo") or {}).get("environment") or {}).get("MONGO_INITDB_ROOT_USERNAME"):
        fail("docker-compose.yml: mongo", "takes clients only over TLS (--tlsMode requireTLS) with a user (MONGO_INITDB_ROOT_USERNAME)")


def check_compose(root, config_path):
    config = json.load(open(config_path, encoding="utf-8"))
    services = config.get("services", {})
    raw = open(os.path.join(root, "docker-compose.yml"), encoding="utf-8").read()

    # Secret values are never committed: each secret-looking variable is a ${...} reference, or a
    # `_FILE` variable naming a mounted Compose secret.
    for match in re.finditer(r"^\s*([A-Z0-9_]*(?:SECRET|PASSWORD|TOKEN|PRIVATE_KEY)[A-Z0-9_]*):\s*(.*)$", raw, re.M):
        name, value = match.group(1), match.group(2).strip().strip("\"'")
        if name.endswith("_FILE") and value.startswith("/run/secrets/"):
            continue
        if not value.startswith("${") or ":-" in value or value.startswith("${" + name + "-"):
            fail("docker-compose.yml", f"{name} must come from the environment with no default (${{{name}:?...}}), not '{value}'")

    read_api_ports = []
    for name, service in sorted(services.items()):
        where = f"docker-compose.yml: {name}"
        if "healthcheck" not in service or service["healthcheck"].get("disable"):
            fail(where, "needs a healthcheck (depends_on waits for service_healthy)")
        for dependency, condition in (service.get("depends_on") or {}).items():
            if condition.get("condition") != "service_healthy":
                fail(where, f"depends_on {dependency} must wait for condition: service_healthy")
        if "build" not in service:
            continue

        # One of this project's services, built from the Dockerfile.
        kind = check_main_exists(root, where, service.get("command"))
        if service.get("init") is not True:
            fail(where, "needs init: true")
        if service.get("read_only") is not True:
            fail(where, "needs read_only: true (with a tmpfs for /tmp)")
        if "/tmp" not in [entry.split(":")[0] for entry in service.get("tmpfs") or []]:
            fail(where, "needs a tmpfs on /tmp")
        if "ALL" not in (service.get("cap_drop") or []):
            fail(where, "needs cap_drop: [ALL]")
        environment = service.get("environment") or {}
        if environment.get("RUNTIME") != "distributed":
            fail(where, "needs RUNTIME=distributed")
        deadline_ms = int(environment.get("SHUTDOWN_DEADLINE_MS", DEFAULT_SHUTDOWN_DEADLINE_MS))
        if go_duration_seconds(service.get("stop_grace_period", "10s")) * 1000 <= deadline_ms:
            fail(where, f"stop_grace_period must exceed SHUTDOWN_DEADLINE_MS ({deadline_ms} ms)")
        if kind not in NEEDS_NO_ENGINE:
            check_compose_engine_clients(where, environment)
        if kind in DISTRIBUTED_SERVICES:
            port = DISTRIBUTED_SERVICES[kind]
            engines = () if kind in NEEDS_NO_ENGINE else ("kafka", "mongo")
            for dependency in engines + (("redis",) if kind in NEEDS_REDIS else ()):
                if dependency not in (service.get("depends_on") or {}):
                    fail(where, f"must depend on {dependency}")
            published = [p for p in service.get("ports") or [] if int(p.get("target", 0)) == port]
            if not published:
                fail(where, f"publishes no port for {port}")
            if kind == "read-api":
                read_api_ports += [p.get("published") for p in published]
        if kind == "notifier" and not str(environment.get("WEBHOOK_SECRET_KEY", "")).strip():
            fail(where, "needs WEBHOOK_SECRET_KEY (it refuses to start on the distributed runtime without it)")
    if len(set(read_api_ports)) < 2:
        fail("docker-compose.yml", f"needs two read-API replicas on distinct host ports, found {read_api_ports}")
    check_compose_engines(services)
    kafka_env = (services.get("kafka") or {}).get("environment") or {}
    if str(kafka_env.get("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "")).lower() != "false":
        fail("docker-compose.yml: kafka", "KAFKA_AUTO_CREATE_TOPICS_ENABLE must be false")
    finish(f"docker-compose.yml: {len(services)} services; healthchecks, init, read-only, secrets from the environment")


# ---------------------------------------------------------------- Kubernetes

def check_k8s(root, rendered_path, name):
    import yaml  # from the validation venv

    documents = [doc for doc in yaml.safe_load_all(open(rendered_path, encoding="utf-8")) if doc]
    by_kind = {}
    for doc in documents:
        by_kind.setdefault(doc["kind"], []).append(doc)
    config_maps = {doc["metadata"]["name"]: doc.get("data") or {} for doc in by_kind.get("ConfigMap", [])}
    here = f"k8s {name}"

    for secret in by_kind.get("Secret", []):
        fail(here, f"Secret {secret['metadata']['name']} is in the repository: Secrets are created out of band")
    if not any(doc["metadata"]["name"] == "rsd-default-deny" for doc in by_kind.get("NetworkPolicy", [])):
        fail(here, "needs the default-deny NetworkPolicy")
    namespaces = {doc["metadata"].get("namespace") for doc in documents if doc["kind"] != "Namespace"}
    if namespaces != {"rsd"}:
        fail(here, f"every namespaced resource belongs in namespace rsd, found {sorted(map(str, namespaces))}")

    deployments = {doc["metadata"]["name"]: doc for doc in by_kind.get("Deployment", [])}
    seen_kinds = set()
    for deployment_name, deployment in sorted(deployments.items()):
        where = f"{here}: Deployment {deployment_name}"
        pod = deployment["spec"]["template"]["spec"]
        pod_security = pod.get("securityContext") or {}
        if (pod_security.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            fail(where, "pod securityContext.seccompProfile.type must be RuntimeDefault")
        if pod.get("automountServiceAccountToken") is not False:
            fail(where, "automountServiceAccountToken must be false")
        volumes = {volume["name"]: volume for volume in pod.get("volumes") or []}
        grace_seconds = pod.get("terminationGracePeriodSeconds", 30)
        containers = pod.get("containers") or []
        if len(containers) != 1:
            fail(where, f"expected one container, found {[c.get('name') for c in containers]}")
        for container in containers:
            cwhere = f"{where}: container {container.get('name')}"
            image = container.get("image") or ""
            if not image or image.endswith(":latest") or ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
                fail(cwhere, f"needs a pinned image (name:tag or digest), found '{image}'")
            kind = check_main_exists(root, cwhere, container.get("command"))
            seen_kinds.add(kind)
            environment = {}
            for source in container.get("envFrom") or []:
                ref = source.get("configMapRef")
                if ref:
                    if ref["name"] not in config_maps and not ref.get("optional"):
                        fail(cwhere, f"envFrom ConfigMap {ref['name']} is not in the rendered manifests")
                    environment.update(config_maps.get(ref["name"], {}))
            from_secrets = set()
            for variable in container.get("env") or []:
                if "value" in variable:
                    environment[variable["name"]] = variable["value"]
                secret_ref = (variable.get("valueFrom") or {}).get("secretKeyRef")
                if secret_ref and secret_ref.get("name") != "rsd-secrets":
                    fail(cwhere, f"{variable['name']} reads Secret {secret_ref.get('name')}; the documented Secret is rsd-secrets")
                if secret_ref:
                    from_secrets.add(variable["name"])
            for variable in sorted(from_secrets & FILE_ONLY_SECRETS):
                fail(cwhere, f"{variable} comes from the environment; mount it and name the file in {variable}_FILE")
            mounted = [mount["mountPath"].rstrip("/") + "/" for mount in container.get("volumeMounts") or []]
            for variable, value in sorted(environment.items()):
                # rsd-common names the engines' files for every service; the console reaches no engine.
                unused = kind in NEEDS_NO_ENGINE and variable.startswith(("KAFKA_", "REDIS_", "MONGO_"))
                if variable.endswith("_FILE") and value and not unused and not any(value.startswith(path) for path in mounted):
                    fail(cwhere, f"{variable} names {value}, which no volume of the container mounts")
            if kind == "notifier" and "WEBHOOK_SECRET_KEY" not in from_secrets:
                fail(cwhere, "WEBHOOK_SECRET_KEY must come from the rsd-secrets Secret (it refuses to start without it)")
            if environment.get("RUNTIME") != "distributed":
                fail(cwhere, "needs RUNTIME=distributed")
            if kind in DISTRIBUTED_SERVICES and environment.get(f"{kind.upper().replace('-', '_')}_HOST") != "0.0.0.0":
                fail(cwhere, f"{kind.upper().replace('-', '_')}_HOST must be 0.0.0.0")
            security = container.get("securityContext") or {}
            if security.get("allowPrivilegeEscalation") is not False:
                fail(cwhere, "allowPrivilegeEscalation must be false")
            if security.get("readOnlyRootFilesystem") is not True:
                fail(cwhere, "readOnlyRootFilesystem must be true")
            if "ALL" not in ((security.get("capabilities") or {}).get("drop") or []):
                fail(cwhere, "capabilities.drop must include ALL")
            if not (security.get("runAsNonRoot") or pod_security.get("runAsNonRoot")):
                fail(cwhere, "runAsNonRoot must be true")
            if security.get("runAsUser", pod_security.get("runAsUser")) != 1000:
                fail(cwhere, "runAsUser must be 1000 (the image's node user)")
            mounts = {mount["mountPath"]: mount["name"] for mount in container.get("volumeMounts") or []}
            if "emptyDir" not in volumes.get(mounts.get("/tmp"), {}):
                fail(cwhere, "needs an emptyDir mounted on /tmp (the root filesystem is read-only)")
            resources = container.get("resources") or {}
            for section in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in (resources.get(section) or {}):
                        fail(cwhere, f"resources.{section}.{resource} is missing")
            port_names = {port.get("name"): port["containerPort"] for port in container.get("ports") or []}
            if kind in DISTRIBUTED_SERVICES and DISTRIBUTED_SERVICES[kind] not in port_names.values():
                fail(cwhere, f"must expose containerPort {DISTRIBUTED_SERVICES[kind]}")
            probes = {"livenessProbe": "/healthz", "readinessProbe": "/readyz"}
            if kind in ("read-api", "notifier"):
                probes["startupProbe"] = "/healthz"
            for probe_name, path in probes.items():
                get = (container.get(probe_name) or {}).get("httpGet") or {}
                if get.get("path") != path:
                    fail(cwhere, f"{probe_name} must GET {path}")
                elif get.get("port") not in port_names and get.get("port") not in port_names.values():
                    fail(cwhere, f"{probe_name} port {get.get('port')} is not a container port")
            pre_stop = ((container.get("lifecycle") or {}).get("preStop") or {})
            pre_stop_seconds = 0
            if "exec" in pre_stop and pre_stop["exec"].get("command", [""])[0] == "sleep":
                pre_stop_seconds = float(pre_stop["exec"]["command"][1])
            elif "sleep" in pre_stop:
                pre_stop_seconds = float(pre_stop["sleep"]["seconds"])
            if pre_stop_seconds <= 0:
                fail(cwhere, "needs a preStop sleep so endpoints drain before SIGTERM")
            deadline_ms = int(environment.get("SHUTDOWN_DEADLINE_MS", DEFAULT_SHUTDOWN_DEADLINE_MS))
            if grace_seconds * 1000 <= pre_stop_seconds * 1000 + deadline_ms:
                fail(cwhere, f"terminationGracePeriodSeconds ({grace_seconds}) must exceed the preStop sleep "
                             f"({pre_stop_seconds:g} s) plus SHUTDOWN_DEADLINE_MS ({deadline_ms} ms)")
    for kind in DISTRIBUTED_SERVICES:
        if kind not in seen_kinds:
            fail(here, f"no Deployment runs services/{kind}/dist/main.js")

    def pods_matching(selector):
        return [d for d in deployments.values()
                if selector and all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]

    for service in by_kind.get("Service", []):
        where = f"{here}: Service {service['metadata']['name']}"
        matches = pods_matching(service["spec"].get("selector"))
        if len(matches) != 1:
            fail(where, f"selector must match exactly one Deployment, matches {len(matches)}")
            continue
        names = {port.get("name") for c in matches[0]["spec"]["template"]["spec"]["containers"] for port in c.get("ports") or []}
        numbers = {port["containerPort"] for c in matches[0]["spec"]["template"]["spec"]["containers"] for port in c.get("ports") or []}
        for port in service["spec"]["ports"]:
            if port.get("targetPort", port["port"]) not in names | numbers:
                fail(where, f"targetPort {port.get('targetPort')} is not a container port")

    # Decision 52: no service is limited to one replica, and losing any one loses nothing.
    found = set()
    for deployment in deployments.values():
        command = str(deployment["spec"]["template"]["spec"]["containers"])
        kinds = [kind for kind in DISTRIBUTED_SERVICES if f"services/{kind}/dist/main.js" in command]
        if not kinds:
            continue
        kind = kinds[0]
        found.add(kind)
        where = f"{here}: Deployment {deployment['metadata']['name']}"
        spec = deployment["spec"]
        hpas = [h for h in by_kind.get("HorizontalPodAutoscaler", [])
                if h["spec"]["scaleTargetRef"].get("name") == deployment["metadata"]["name"]]
        if kind in AUTOSCALED:
            if "replicas" in spec:
                fail(where, "leaves `replicas` to its HorizontalPodAutoscaler (a fixed value resets it on every apply)")
            if not hpas or hpas[0]["apiVersion"] != "autoscaling/v2" or hpas[0]["spec"].get("minReplicas", 1) < 2:
                fail(where, "needs an autoscaling/v2 HorizontalPodAutoscaler with minReplicas >= 2")
        elif spec.get("replicas", 1) < 2:
            fail(where, f"runs at least 2 replicas, found {spec.get('replicas', 1)}")
        if (spec.get("strategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
            fail(where, "needs strategy RollingUpdate")
        labels = spec["template"]["metadata"]["labels"]
        pdbs = [p for p in by_kind.get("PodDisruptionBudget", [])
                if all(labels.get(k) == v for k, v in (p["spec"]["selector"].get("matchLabels") or {}).items())]
        if not pdbs or pdbs[0]["spec"].get("minAvailable") != 1:
            fail(where, "needs a PodDisruptionBudget with minAvailable: 1")
        spreads = spec["template"]["spec"].get("topologySpreadConstraints") or []
        if not any(c.get("topologyKey") == "kubernetes.io/hostname" for c in spreads):
            fail(where, "needs a topologySpreadConstraint across nodes (kubernetes.io/hostname)")
    for kind in sorted(set(DISTRIBUTED_SERVICES) - found):
        fail(here, f"no {kind} Deployment")

    # Alertmanager opens a runbook_url as it is: absolute, on the overlay's RUNBOOK_BASE_URL when it sets one.
    runbooks_env = os.path.join(root, "k8s", name, "runbooks.env")
    base = None
    if os.path.exists(runbooks_env):
        for line in open(runbooks_env, encoding="utf-8"):
            if line.startswith("RUNBOOK_BASE_URL="):
                base = line.strip().split("=", 1)[1]
    for rule_resource in by_kind.get("PrometheusRule", []):
        for group in rule_resource["spec"]["groups"]:
            for rule in group["rules"]:
                if "alert" not in rule:
                    continue
                where = f"{here}: PrometheusRule {rule_resource['metadata']['name']}: {rule['alert']}"
                url = (rule.get("annotations") or {}).get("runbook_url", "")
                page, _, section = url.partition("#")
                if not re.match(r"^https?://", page) or section != rule["alert"].lower():
                    fail(where, f"runbook_url must be an absolute URL ending #{rule['alert'].lower()}, found {url!r}")
                elif base is not None and page != base:
                    fail(where, f"runbook_url is not on RUNBOOK_BASE_URL of runbooks.env ({base}): {url}")
    finish(f"{here}: {len(documents)} resources; probes, security contexts, shutdown timing, references")


def main(argv):
    if len(argv) >= 2 and argv[0] == "dockerfile":
        check_dockerfile(argv[1])
    elif len(argv) >= 3 and argv[0] == "compose":
        check_compose(argv[1], argv[2])
    elif len(argv) >= 4 and argv[0] == "k8s":
        check_k8s(argv[1], argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
