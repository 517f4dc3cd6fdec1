"""Google Cloud: everything gpuinfra knows of Google, in one package whose subpackages are named for the
pipeline stage they belong to (spec, catalog, plan, validators, pulumi, preflight, cost, policy), each importing
only the stages below it, as the top-level stages do. The cloud registry (gpuinfra.clouds) names these parts;
nothing outside this package imports them by name, so pulumi-gcp loads only for a Google stack."""
