#!/usr/bin/env python3
"""Offline structural checks for deploy/, run by deploy/validate.sh.

  checks.py keda DIR        KEDA ScaledObject / TriggerAuthentication in DIR
  checks.py kustomize DIR   kustomization.yaml lists existing files, and every
                            manifest in DIR (but the example Secret) is listed
  checks.py compose FILE    compose file: services, depends_on, volumes, build

kubernetes-validate knows only the built-in API schemas; KEDA's resources are
CRDs, so their fields are checked here against KEDA's documented schema
(keda.sh/v1alpha1, KEDA 2.x). Prints one line per problem; exit 1 if any.
"""
import os
import re
import sys

import yaml

problems = []


def fail(where, msg):
    problems.append(f"{where}: {msg}")


def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def check_keys(where, obj, allowed, required=()):
    if not isinstance(obj, dict):
        fail(where, f"must be a mapping, got {type(obj).__name__}")
        return False
    for k in required:
        if k not in obj:
            fail(where, f"missing required key '{k}'")
    for k in obj:
        if k not in allowed:
            fail(where, f"unknown key '{k}' (allowed: {', '.join(sorted(allowed))})")
    return True


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


# --------------------------------------------------------------------- KEDA
KEDA_API = "keda.sh/v1alpha1"
SO_SPEC = {"scaleTargetRef", "pollingInterval", "cooldownPeriod", "initialCooldownPeriod",
           "idleReplicaCount", "minReplicaCount", "maxReplicaCount", "fallback",
           "advanced", "triggers"}
SO_TARGET = {"name", "apiVersion", "kind", "envSourceContainerName"}
SO_ADVANCED = {"restoreToOriginalReplicaCount", "horizontalPodAutoscalerConfig", "scalingModifiers"}
SO_HPA_CONFIG = {"name", "behavior"}
HPA_BEHAVIOR = {"scaleUp", "scaleDown"}
HPA_RULES = {"stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"}
HPA_POLICY = {"type", "value", "periodSeconds"}
SO_FALLBACK = {"failureThreshold", "replicas", "behavior"}
TRIGGER = {"type", "name", "metadata", "authenticationRef", "metricType", "useCachedMetrics"}
AUTH_REF = {"name", "kind"}
# postgresql scaler metadata (keda.sh/docs/latest/scalers/postgresql/)
PG_META = {"query", "targetQueryValue", "activationTargetQueryValue", "connectionFromEnv",
           "host", "port", "userName", "passwordFromEnv", "dbName", "sslmode", "metricName"}
PG_META_REQUIRED = ("query", "targetQueryValue")
# postgresql scaler authentication parameters
PG_AUTH_PARAMS = {"connection", "password", "host", "port", "userName", "dbName", "sslmode"}
TA_SPEC = {"secretTargetRef", "env", "configMapTargetRef", "podIdentity", "hashiCorpVault",
           "azureKeyVault", "awsSecretManager", "gcpSecretManager", "boundServiceAccountToken"}
TA_SECRET_REF = {"parameter", "name", "key"}


def check_hpa_behavior(where, beh):
    if not check_keys(where, beh, HPA_BEHAVIOR):
        return
    for dirn, rules in beh.items():
        w = f"{where}.{dirn}"
        if not check_keys(w, rules, HPA_RULES):
            continue
        if "stabilizationWindowSeconds" in rules and not is_int(rules["stabilizationWindowSeconds"]):
            fail(w, "stabilizationWindowSeconds must be an integer")
        for i, p in enumerate(rules.get("policies", [])):
            pw = f"{w}.policies[{i}]"
            if check_keys(pw, p, HPA_POLICY, HPA_POLICY):
                if p.get("type") not in ("Pods", "Percent"):
                    fail(pw, "type must be Pods or Percent")
                if not is_int(p.get("value")) or not is_int(p.get("periodSeconds")):
                    fail(pw, "value and periodSeconds must be integers")


def check_keda(directory):
    resources = {}  # (kind, name) -> (file, doc)
    for fn in sorted(os.listdir(directory)):
        if fn.endswith((".yaml", ".yml")) and fn != "kustomization.yaml":
            for doc in load_docs(os.path.join(directory, fn)):
                md = doc.get("metadata") or {}
                resources[(doc.get("kind"), md.get("name"))] = (fn, doc)

    sos = [(k, v) for k, v in resources.items() if k[0] == "ScaledObject"]
    tas = {k[1]: v for k, v in resources.items() if k[0] == "TriggerAuthentication"}
    if not sos:
        fail(directory, "no KEDA ScaledObject found")

    for name, (fn, doc) in tas.items():
        where = f"{fn}: TriggerAuthentication/{name}"
        check_keys(where, doc, {"apiVersion", "kind", "metadata", "spec"}, ("apiVersion", "metadata", "spec"))
        if doc.get("apiVersion") != KEDA_API:
            fail(where, f"apiVersion must be {KEDA_API}")
        spec = doc.get("spec")
        if not check_keys(where + ".spec", spec, TA_SPEC):
            continue
        for i, ref in enumerate(spec.get("secretTargetRef", [])):
            rw = f"{where}.spec.secretTargetRef[{i}]"
            if not check_keys(rw, ref, TA_SECRET_REF, TA_SECRET_REF):
                continue
            secret = resources.get(("Secret", ref["name"]))
            if secret is None:
                fail(rw, f"Secret '{ref['name']}' is not defined in {directory}")
            else:
                sdoc = secret[1]
                keys = set((sdoc.get("stringData") or {}).keys()) | set((sdoc.get("data") or {}).keys())
                if ref["key"] not in keys:
                    fail(rw, f"Secret '{ref['name']}' has no key '{ref['key']}'")

    for (_, name), (fn, doc) in sos:
        where = f"{fn}: ScaledObject/{name}"
        check_keys(where, doc, {"apiVersion", "kind", "metadata", "spec"}, ("apiVersion", "metadata", "spec"))
        if doc.get("apiVersion") != KEDA_API:
            fail(where, f"apiVersion must be {KEDA_API}")
        md = doc.get("metadata") or {}
        if not md.get("name"):
            fail(where, "metadata.name is required")
        spec = doc.get("spec")
        if not check_keys(where + ".spec", spec, SO_SPEC, ("scaleTargetRef", "triggers")):
            continue
        for k in ("pollingInterval", "cooldownPeriod", "initialCooldownPeriod",
                  "idleReplicaCount", "minReplicaCount", "maxReplicaCount"):
            if k in spec and (not is_int(spec[k]) or spec[k] < 0):
                fail(where, f"spec.{k} must be a non-negative integer")
        lo, hi = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
        if is_int(lo) and is_int(hi) and not lo <= hi:
            fail(where, "minReplicaCount must be <= maxReplicaCount")
        if is_int(hi) and hi < 1:
            fail(where, "maxReplicaCount must be >= 1")

        tgt = spec.get("scaleTargetRef")
        if check_keys(where + ".spec.scaleTargetRef", tgt, SO_TARGET, ("name",)):
            kind = tgt.get("kind", "Deployment")
            if (kind, tgt.get("name")) not in resources:
                fail(where, f"scaleTargetRef {kind}/{tgt.get('name')} is not defined in {directory}")
            elif kind == "Deployment" and "replicas" in resources[(kind, tgt["name"])][1].get("spec", {}):
                fail(where, f"Deployment/{tgt['name']} sets spec.replicas; KEDA owns it "
                            "(re-applying would fight the autoscaler)")

        adv = spec.get("advanced")
        if adv is not None and check_keys(where + ".spec.advanced", adv, SO_ADVANCED):
            hpa = adv.get("horizontalPodAutoscalerConfig")
            if hpa is not None and check_keys(where + ".spec.advanced.horizontalPodAutoscalerConfig",
                                              hpa, SO_HPA_CONFIG):
                if "behavior" in hpa:
                    check_hpa_behavior(where + ".spec.advanced.horizontalPodAutoscalerConfig.behavior",
                                       hpa["behavior"])
        if "fallback" in spec:
            check_keys(where + ".spec.fallback", spec["fallback"], SO_FALLBACK,
                       ("failureThreshold", "replicas"))

        triggers = spec.get("triggers")
        if not isinstance(triggers, list) or not triggers:
            fail(where, "spec.triggers must be a non-empty list")
            continue
        names = [t.get("name") for t in triggers if isinstance(t, dict) and t.get("name")]
        if len(names) != len(set(names)):
            fail(where, "trigger names must be unique")
        pg_seen = False
        for i, trig in enumerate(triggers):
            tw = f"{where}.spec.triggers[{i}]"
            if not check_keys(tw, trig, TRIGGER, ("type", "metadata")):
                continue
            if trig.get("type") != "postgresql":
                fail(tw, f"type is '{trig.get('type')}', expected 'postgresql'")
                continue
            pg_seen = True
            meta = trig.get("metadata")
            if not check_keys(tw + ".metadata", meta, PG_META, PG_META_REQUIRED):
                continue
            for k, v in meta.items():
                if not isinstance(v, str):
                    fail(tw + ".metadata", f"'{k}' must be a string (KEDA metadata is map[string]string), "
                                           f"got {type(v).__name__}: quote it")
            for k in ("targetQueryValue", "activationTargetQueryValue"):
                if k in meta:
                    try:
                        val = float(meta[k])
                    except (TypeError, ValueError):
                        fail(tw + ".metadata", f"{k} '{meta[k]}' is not a number")
                        continue
                    if k == "targetQueryValue" and val <= 0:
                        fail(tw + ".metadata", "targetQueryValue must be > 0")
            q = str(meta.get("query", ""))
            if not re.match(r"\s*select\b", q, re.I):
                fail(tw + ".metadata", "query must be a single SELECT returning one number")
            if ";" in q.strip().rstrip(";"):
                fail(tw + ".metadata", "query must be a single statement")
            for secret_key in ("password", "connection"):
                if secret_key in meta:
                    fail(tw + ".metadata", f"'{secret_key}' in plain metadata: use authenticationRef")
            ref = trig.get("authenticationRef")
            if ref is None:
                fail(tw, "authenticationRef is required (connection comes from the Secret)")
                continue
            if not check_keys(tw + ".authenticationRef", ref, AUTH_REF, ("name",)):
                continue
            if ref.get("kind", "TriggerAuthentication") != "TriggerAuthentication":
                continue  # ClusterTriggerAuthentication lives outside this directory
            ta = tas.get(ref["name"])
            if ta is None:
                fail(tw, f"authenticationRef: TriggerAuthentication '{ref['name']}' is not defined")
                continue
            params = {r.get("parameter") for r in (ta[1].get("spec") or {}).get("secretTargetRef", [])}
            params |= {r.get("parameter") for r in (ta[1].get("spec") or {}).get("env", [])}
            bad = params - PG_AUTH_PARAMS
            if bad:
                fail(tw, f"TriggerAuthentication '{ref['name']}' parameters {sorted(bad)} "
                         f"are not postgresql scaler parameters {sorted(PG_AUTH_PARAMS)}")
            if "connection" not in params and "host" not in params and "host" not in meta:
                fail(tw, "no connection: TriggerAuthentication needs a 'connection' parameter")
        if not pg_seen:
            fail(where, "no postgresql trigger")


# ----------------------------------------------------------------- kustomize
def check_database_urls(directory):
    """Every example DATABASE_URL in the manifests verifies the server: sslmode=verify-full."""
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(directory, name)) as f:
            for number, line in enumerate(f, 1):
                for url in re.findall(r"postgres(?:ql)?://[^\s'\"]+", line):
                    if "sslmode=verify-full" not in url:
                        fail(f"{name}:{number}", "an example DATABASE_URL must use sslmode=verify-full (not require or prefer)")


def check_kustomize(directory):
    check_database_urls(directory)
    path = os.path.join(directory, "kustomization.yaml")
    if not os.path.exists(path):
        fail(directory, "kustomization.yaml missing")
        return
    docs = load_docs(path)
    if len(docs) != 1:
        fail(path, "must hold exactly one document")
        return
    k = docs[0]
    if k.get("kind") != "Kustomization" or not str(k.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"):
        fail(path, "not a kustomize.config.k8s.io Kustomization")
    listed = k.get("resources") or []
    for r in listed:
        if not os.path.exists(os.path.join(directory, r)):
            fail(path, f"resource '{r}' does not exist")
    for fn in sorted(os.listdir(directory)):
        if fn.endswith((".yaml", ".yml")) and fn != "kustomization.yaml" \
                and ".example." not in fn and fn not in listed:
            fail(path, f"'{fn}' is not listed in resources")
        if ".example." in fn and fn in listed:
            fail(path, f"'{fn}' is an example and must not be applied by kustomize")
    ns = k.get("namespace")
    for fn in listed:
        for doc in load_docs(os.path.join(directory, fn)):
            dns = (doc.get("metadata") or {}).get("namespace")
            if doc.get("kind") != "Namespace" and dns not in (None, ns):
                fail(fn, f"{doc.get('kind')}/{doc['metadata'].get('name')} namespace '{dns}' != '{ns}'")


# ------------------------------------------------------------------- compose
DEP_CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}


def check_compose(path):
    base = os.path.dirname(os.path.abspath(path))
    docs = load_docs(path)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        fail(path, "must be one YAML mapping")
        return
    c = docs[0]
    services = c.get("services")
    if not isinstance(services, dict) or not services:
        fail(path, "no services")
        return
    volumes = set((c.get("volumes") or {}).keys())
    for name, svc in services.items():
        where = f"{path}: service '{name}'"
        if not isinstance(svc, dict):
            fail(where, "must be a mapping")
            continue
        if "image" not in svc and "build" not in svc:
            fail(where, "needs image or build")
        build = svc.get("build")
        if isinstance(build, dict):
            ctx = os.path.normpath(os.path.join(base, build.get("context", ".")))
            df = os.path.join(ctx, build.get("dockerfile", "Dockerfile"))
            if not os.path.isdir(ctx):
                fail(where, f"build context {ctx} does not exist")
            if not os.path.isfile(df):
                fail(where, f"Dockerfile {df} does not exist")
        deps = svc.get("depends_on") or {}
        if isinstance(deps, list):
            deps = {d: {"condition": "service_started"} for d in deps}
        for dep, spec in deps.items():
            if dep not in services:
                fail(where, f"depends_on '{dep}' is not a service")
                continue
            cond = (spec or {}).get("condition", "service_started")
            if cond not in DEP_CONDITIONS:
                fail(where, f"depends_on '{dep}': unknown condition '{cond}'")
            target = services[dep]
            if cond == "service_healthy":
                hc = target.get("healthcheck")
                if not hc or hc.get("disable"):
                    fail(where, f"depends_on '{dep}' service_healthy, but '{dep}' has no healthcheck")
            if cond == "service_completed_successfully" and \
                    target.get("restart") not in (None, "no"):
                fail(where, f"depends_on '{dep}' service_completed_successfully, but '{dep}' restarts")
            if set(target.get("profiles") or []) - set(svc.get("profiles") or []):
                fail(where, f"depends_on '{dep}' which is only in profiles {target.get('profiles')}")
        for v in svc.get("volumes") or []:
            src = v.split(":", 1)[0] if isinstance(v, str) else (v or {}).get("source")
            if not src:
                continue
            if src.startswith((".", "/")):
                if src.startswith(".") and not os.path.exists(os.path.join(base, src)):
                    fail(where, f"bind mount source {src} does not exist")
            elif src not in volumes:
                fail(where, f"volume '{src}' is not declared under top-level volumes")
    # The workers must not start before the schema exists.
    if "worker" in services:
        deps = services["worker"].get("depends_on") or {}
        if not isinstance(deps, dict) or \
                (deps.get("migrate") or {}).get("condition") != "service_completed_successfully":
            fail(path, "worker must depend on migrate with condition service_completed_successfully")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("keda", "kustomize", "compose"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, arg = sys.argv[1], sys.argv[2]
    try:
        {"keda": check_keda, "kustomize": check_kustomize, "compose": check_compose}[cmd](arg)
    except (OSError, yaml.YAMLError) as e:
        fail(arg, str(e))
    for p in problems:
        print(f"  {cmd}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
