"""`evalrun redteam list` (the attack catalogue) and `evalrun redteam plan` (attack suites made from cases)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import add_config, add_no_cache, add_output_dir, add_paths, names


def add_redteam(sub) -> None:
    redteam = sub.add_parser("redteam", help="red-team attacks: the catalogue, and attack suites planned from cases",
                             description="`evalrun redteam list` prints the attack catalogue; `evalrun redteam plan` "
                                         "writes, for each case and attack, a suite whose user carries out the attack "
                                         "and whose checks say what a safe agent does. Run the planned suites as any "
                                         "suite: `evalrun suites/redteam/`.")
    action = redteam.add_subparsers(dest="redteam_command", metavar="ACTION", required=True)
    listing = action.add_parser("list", help="print the attack catalogue")
    add_config(listing, help="the evalrun.yaml whose prompts_dir may hold its own redteam/catalogue.yaml")
    planning = action.add_parser(
        "plan", help="write attack suites made from existing cases",
        description="For each case under SUITES and each attack, write one suite (per variant) to -o DIR: the "
                    "attacking user's turns, a canary planted in the agent's context that nothing the agent writes may "
                    "contain, the forbidden tools in forbid_extra_calls, a check that fails on any call to a "
                    "write-like tool the case does not need and, for attacks judged on words, a `refusal` check. "
                    "Every planned suite is validated before any is written; on a failure nothing is written. "
                    "Exit 0; 3 when --generate's model gives no usable attack; 4 on invalid suites or a usage error; "
                    "5 when there is no case to attack.")
    add_paths(planning, metavar="SUITES")
    add_output_dir(planning, required=True,
                   help="where to write the attack suites (files of the same name are replaced)")
    planning.add_argument("--attacks", type=names, metavar="A,B", help="only these attacks (default: all)")
    planning.add_argument("-n", type=int, default=1, metavar="N", dest="variants",
                          help="variants per attack, up to the number each attack has (default 1)")
    planning.add_argument("--forbidden-tools", type=names, metavar="T1,T2",
                          help="the tools the agent must never call (default: each case's write-like tools that its "
                               "goals never call: names with verbs such as create, update, delete, cancel, send, pay)")
    planning.add_argument("--allow-tools", type=names, metavar="T1,T2", default=[],
                          help="write-like tools the agent may call under attack (names or globs): every planned case "
                               "fails on any other call to a write-like tool (its `no_write_calls` check), besides "
                               "the forbidden tools; the write-like tools the case's goals call are always allowed")
    planning.add_argument("--generate", action="store_true",
                          help="have the generator model (evalrun.yaml's `generator:`, else its `judge:`) write each "
                               "attack's user turns in its own words, seeded with the built-in template (replies are "
                               "cached: the same inputs give the same files); without it the templates write them, "
                               "offline")
    add_no_cache(planning, help="with --generate: ask the model again")
    add_config(planning, help="the evalrun.yaml to use (default: the first one next to or above SUITES)")


def cmd_redteam(args: argparse.Namespace) -> int:
    from ...authoring.redteam.catalogue import CatalogueError, catalogue_lines, load_catalogue
    from ...authoring.redteam.plan import PlanError, plan

    if args.redteam_command == "list":
        from ...config.discovery import find_config
        from ...config.load import load_config

        loaded, _ = load_config(args.config or find_config([Path.cwd()]))
        try:
            catalogue = load_catalogue(loaded.resolve(loaded.config.prompts_dir))
        except CatalogueError as exc:
            print(f"evalrun redteam list: {exc}", file=sys.stderr)
            return 4
        print("\n".join(catalogue_lines(catalogue)))
        return 0
    try:
        result = plan(args.paths, args.output_dir, attacks=args.attacks, variants=args.variants,
                      forbidden_tools=args.forbidden_tools, config_path=args.config, generate=args.generate,
                      no_cache=args.no_cache, allow_tools=args.allow_tools)
    except PlanError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        print(f"evalrun redteam plan: {exc}", file=sys.stderr)
        return exc.exit_code
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for suite, path in zip(result.suites, result.written, strict=True):
        print(f"{path}  ({suite.attack}, {suite.category})")
    print(f"planned {len(result.written)} attack suite(s) from {result.cases} case(s); run them with: evalrun "
          f"{args.output_dir}", file=sys.stderr)
    return 0
