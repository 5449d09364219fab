"""Commands that read finished runs or measure a judge, never running a case: `evalrun report`, `compare`,
`merge` and `calibrate`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import (
    add_config,
    add_no_cache,
    add_output_dir,
    add_print_format,
    add_report_formats,
    format_help,
    format_names,
    share,
)


def add_report(sub) -> None:
    report = sub.add_parser("report", help="write a report format from a finished run",
                            description="Render a finished run's report.json again in another format, without "
                                        "running or scoring anything: " + format_help() + ".")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                        help="a run's folder (for example .evalrun/reports/latest) or its report.json")
    add_report_formats(report, required=True,
                       help="the format to write (" + ", ".join(format_names()) + "); repeatable")
    report.add_argument("-o", "--output", type=Path, metavar="PATH",
                        help="where to write it (default: the format's file name in the run folder); only with "
                             "one --format")


def add_compare(sub) -> None:
    compare = sub.add_parser("compare", help="compare two finished runs",
                             description="Compare two finished runs case by case: the cases newly failing and newly "
                                         "passing, the change of each metric mean (over the cases scored in both), and "
                                         "an exact McNemar test on the cases that flipped, which says whether the "
                                         "change is more than chance. Exit 0 when nothing regressed, 1 when a case "
                                         "that passed in OLD does not pass in NEW or a metric mean dropped by more "
                                         "than --max-regression, 4 when OLD or NEW is not a report.")
    compare.add_argument("old", type=Path, metavar="OLD", help="the earlier run: its folder or its report.json")
    compare.add_argument("new", type=Path, metavar="NEW", help="the later run: its folder or its report.json")
    add_print_format(compare, choices=("text", "md"), help="text for the console, md for a pull-request comment")
    compare.add_argument("--max-regression", type=share, default=0.0, metavar="DROP",
                         help="how far a metric mean (a share 0-1) may drop before it counts as a regression "
                              "(default 0.0)")


def add_merge(sub) -> None:
    merge = sub.add_parser("merge", help="join the shards of a run into one report",
                           description="Join the reports of the shards of one run (each run with --shard I/N, on the "
                                       "machines of a CI matrix) into one report.json with one verdict and exit code, "
                                       "as if it had been a single run. Shards of different suites or configurations, "
                                       "or with a case in two shards, are refused (exit 4); a missing shard exits 3.")
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT",
                       help="each shard's run folder or report.json")
    add_output_dir(merge, required=True, help="where to write the merged report.json (and the --format files)")
    add_report_formats(merge, help="also write this format of the merged report (" + format_help() +
                                   "); repeatable")
    merge.add_argument("--min-pass-rate", type=share, metavar="RATE",
                       help="as for run: overrides the min_pass_rate of the shards' evalrun.yaml")
    merge.add_argument("--baseline", type=Path, metavar="REPORT",
                       help="as for run: exit 1 when the merged run falls behind this saved run")
    merge.add_argument("--max-regression", type=share, default=0.0, metavar="DROP",
                       help="with --baseline: how far a metric mean (a share 0-1) may drop (default 0.0)")


def add_calibrate(sub) -> None:
    calibrate = sub.add_parser(
        "calibrate", help="measure a judged check against examples people labelled",
        description="Run the check of LABELS (a labels file: `check:` and `examples:` labelled pass or fail; see "
                    "docs/how-to/checks.md, 'Calibrating a judge') on every example with evalrun.yaml's judge, and print how often it agrees with the "
                    "labels, Cohen's kappa and the confusion table. Exit 0; 1 when --min-kappa is not reached; 3 when "
                    "the check decided no example (no judge, or no usable answer); 4 on an invalid file.")
    calibrate.add_argument("labels", type=Path, metavar="LABELS", help="the labels file (YAML or JSON)")
    add_config(calibrate, help="the evalrun.yaml with the judge (default: the first one next to or above LABELS)")
    add_no_cache(calibrate, help="ask the judge again instead of using its cache")
    calibrate.add_argument("--min-kappa", type=float, metavar="K", help="exit 1 when Cohen's kappa is below K")
    add_print_format(calibrate, help="how to print the result")


def cmd_report(args: argparse.Namespace) -> int:
    from ...report.render import render_many
    from ...report.saved import NotAReport

    if args.output is not None and len(set(args.formats)) > 1:
        print("evalrun report: -o/--output names one file: give one --format with it", file=sys.stderr)
        return 4
    try:
        written = render_many(args.formats, args.run_dir, {args.formats[0]: args.output} if args.output else None)
    except NotAReport as exc:
        print(f"evalrun report: {exc}", file=sys.stderr)
        return 4
    except OSError as exc:
        from ...results.folder import describe_os_error

        print(f"evalrun report: cannot write the report: {describe_os_error(exc)}", file=sys.stderr)
        return 3
    for path in written:
        print(path)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ...report.compare import as_markdown, as_text, compare_reports
    from ...report.saved import NotAReport

    try:
        comparison = compare_reports(args.old, args.new)
    except NotAReport as exc:
        print(f"evalrun compare: {exc}", file=sys.stderr)
        return 4
    render = as_markdown if args.format == "md" else as_text
    sys.stdout.write(render(comparison, args.max_regression))
    regressions = comparison.regressions(args.max_regression)
    print("; ".join(regressions) + ": exit 1" if regressions else "no regression: exit 0", file=sys.stderr)
    return 1 if regressions else 0


def cmd_merge(args: argparse.Namespace) -> int:
    from ...report.console import Console, print_summary
    from ...report.merge import MergeError, check_baseline, merge_reports, write_merged
    from ...report.render import render_many
    from ...report.saved import NotAReport
    from ...results.folder import describe_os_error
    from ...results.models import Summary

    try:
        merged = merge_reports(args.reports, min_pass_rate=args.min_pass_rate)
        if args.baseline is not None:
            check_baseline(merged, args.baseline, args.max_regression)
    except (NotAReport, MergeError) as exc:
        print(f"evalrun merge: {exc}", file=sys.stderr)
        return 4
    try:
        target = write_merged(merged, args.output_dir)
        written = render_many(args.formats, target) if args.formats else []
    except OSError as exc:
        print(f"evalrun merge: cannot write the merged report: {describe_os_error(exc)}", file=sys.stderr)
        return 3
    summary = Summary.model_validate(merged["summary"])
    out = Console(sys.stdout)
    print_summary(out, summary, notes=[f"merged {len(merged['merged_from'])} shard(s): "
                                       + ", ".join(merged["merged_from"])], report_path=str(target),
                  agent=merged.get("agent"))
    for path in written:
        if path != target:  # --format json: the merged report.json itself
            out.line(f"{path.name}: {path}")
    return summary.exit_code


def cmd_calibrate(args: argparse.Namespace) -> int:
    import json

    from ...session.calibrate import calibrate
    from .calibrate import render

    agreement, problems = calibrate(args.labels, config_path=args.config, no_cache=args.no_cache)
    for problem in problems:
        print(problem, file=sys.stderr)
    if agreement is None:
        return 4
    if args.format == "json":
        print(json.dumps(agreement.model_dump(), indent=1))
    else:
        print("\n".join(render(agreement)))
    if agreement.decided == 0:
        print("the check decided none of the examples (see why above): exit 3", file=sys.stderr)
        return 3
    if args.min_kappa is not None and (agreement.kappa is None or agreement.kappa < args.min_kappa):
        kappa = "undefined" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        print(f"Cohen's kappa {kappa} is below --min-kappa {args.min_kappa:g}: exit 1", file=sys.stderr)
        return 1
    return 0
