"""The Python client's methods and models as JSON, for test/clients-surface.test.ts.

methods: found by reflection on a constructed QuarryClient (a public method is a top-level
method, a public attribute holding an object with public methods a resource), spelled as the
TypeScript client does (``account.set_password`` -> ``account.setPassword``); module-level
functions of ``quarry_client`` are top-level methods too (``sign_up`` -> ``signUp``).
models: every class of the package that names the OpenAPI schema(s) it stands for in
``__quarry_schema__``, with its fields (dataclass fields, or a TypedDict's keys): wire names.
"""
import dataclasses
import inspect
import json
import typing

import quarry_client


def camel(name):
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def public_methods(obj):
    return sorted(
        name for name, value in inspect.getmembers(obj)
        if not name.startswith("_") and callable(value) and not inspect.isclass(value)
    )


def methods():
    client = quarry_client.QuarryClient("http://127.0.0.1:9", api_key="qry_live_surface")
    found = []
    for name in dir(client):
        if name.startswith("_"):
            continue
        value = getattr(client, name)
        if inspect.ismethod(value):
            found.append(camel(name))
        elif not callable(value) and not isinstance(value, (str, int, float, bool, type(None))):
            found.extend(f"{camel(name)}.{camel(method)}" for method in public_methods(value))
    for name, value in inspect.getmembers(quarry_client, inspect.isfunction):
        if not name.startswith("_"):
            found.append(camel(name))
    return sorted(set(found))


def fields_of(cls):
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.name != "raw"]
    return list(typing.get_type_hints(cls).keys())


def models():
    found = {}
    seen = set()
    modules = [getattr(quarry_client, name) for name in dir(quarry_client) if inspect.ismodule(getattr(quarry_client, name))]
    for module in [quarry_client, *modules]:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            schemas = getattr(cls, "__quarry_schema__", None)
            if not schemas or cls in seen:
                continue
            seen.add(cls)
            for schema in (schemas,) if isinstance(schemas, str) else schemas:
                found[schema] = fields_of(cls)
    return found


print(json.dumps({"methods": methods(), "models": models()}))
