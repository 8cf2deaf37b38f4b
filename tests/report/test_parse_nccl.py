"""nccl-tests parser on every real log in shared/fixtures/nccl-logs.

Each expected number was read by hand from the fixture file; the comment gives the line
(line 1 of every fixture is its `# SOURCE:` line, so line numbers match `sed -n Np FILE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from krm_fn.report.formats.nccl_tests import parse_nccl
from krm_fn.report.logprofiles import BUILTIN_PROFILES
from krm_fn.report.model import Bandwidth

from .conftest import NCCL_LOGS, logs_in, nccl_log, source

PROFILE = BUILTIN_PROFILES["nccl-bandwidth"]


def parse(name: str) -> Bandwidth:
    return parse_nccl(source(nccl_log(name)).lines, PROFILE)


@dataclass(frozen=True)
class Expected:
    file: str
    header_line: int
    rows: int
    first_row: tuple[int, int, float, float]  # line, size, algbw, busbw (out-of-place)
    last_row: tuple[int, int, float, float]
    avg: float | None  # footer value; None when the log has no "Avg bus bandwidth" line
    out_of_bounds: int | None
    fmt: str = "new"
    redop: str = "sum"
    wrong: int | None = 0  # last row's out-of-place #wrong (None: N/A or old format)
    profile_rows: int | None = None  # rows matched by the built-in regex; default all


# One entry per fixture, laid out as a table (one line of numbers per file).
# fmt: off
TABLES = [
    Expected(
        # line 3: column header; lines 5-36 rows; line 37 "Out of bounds values : 0 OK";
        # line 38 "Avg bus bandwidth : 156.742"; every line has the [1,0]<stdout>: prefix
        "aws-awsome-distributed-training_aws-batch-p5_all_reduce.txt",
        3, 32, (5, 8, 0.00, 0.00), (36, 17179869184, 276.03, 483.05), 156.742, 0,
    ),
    Expected(
        # line 5: the 0-byte row; line 6: "..." elision; lines 7-12 rows;
        # line 12: 2147483648 ... algbw 233.49 busbw 437.79; line 14: avg 52.9753
        "aws-awsome-distributed-training_eks-p5-mpijob_all_reduce_excerpt.txt",
        3, 7, (5, 0, 0.00, 0.00), (12, 2147483648, 233.49, 437.79), 52.9753, 0,
    ),
    Expected(
        # "0: " srun prefix; line 2 header; lines 4-35 rows; no footer in the source;
        # line 35: 17179869184 ... algbw 259.78 busbw 487.09
        "aws-awsome-distributed-training_p5-48xlarge-2node_all_reduce.txt",
        2, 32, (4, 8, 0.00, 0.00), (35, 17179869184, 259.78, 487.09), None, None,
    ),
    Expected(
        # old format: line 525 header "size count type redop time algbw busbw error";
        # line 565: "8 2 float sum 179.1 0.00 0.00 2e-07 ..."; line 594: 4294967296 ...
        # algbw 23.36 busbw 43.81; line 596: avg 11.2432. Rows at lines 590-594 print the
        # time as an integer (13233 ... 183834), which the built-in regex misreads.
        "aws-efa-eks_p4d-24xlarge-2node-eks_all_reduce_full-launcher-log.txt",
        525, 30, (565, 8, 0.00, 0.00), (594, 4294967296, 23.36, 43.81), 11.2432, 0,
        fmt="old", wrong=None, profile_rows=0,
    ),
    Expected(
        # -c 0: #wrong is N/A; -f 4 steps 8, 32, 128, ...; line 20: 8589934592 ... algbw 99.85
        # busbw 187.22; line 22: avg 56.3994
        "azure-aks-rdma-infiniband_aks-sriov-ib-2node_all_reduce_nocheck.txt",
        3, 16, (5, 8, 0.00, 0.00), (20, 8589934592, 99.85, 187.22), 56.3994, 0, wrong=None,
    ),
    Expected(
        # line 6 header; line 8: 536870912 ... 179.88 356.01; line 12: 8589934592 ... 195.31
        # 386.56; line 14: avg 373.187
        "coreweave-nccl-tests_h100-64gpu-sharp-mpijob_all_reduce.txt",
        6, 5, (8, 536870912, 179.88, 356.01), (12, 8589934592, 195.31, 386.56), 373.187, 0,
    ),
    Expected(
        # line 11: 8589934592 2147483648 ... algbw 423.16 busbw 834.57; line 13: avg 745.53
        "coreweave-nccl-tests_gb200-nvl72-single-rack_all_reduce.txt",
        5, 5, (7, 536870912, 297.16, 586.06), (11, 8589934592, 423.16, 834.57), 745.53, 0,
    ),
    Expected(
        # line 11: 17179869184 ... algbw 203.01 busbw 405.74; line 13: avg 297.808
        "coreweave-nccl-tests_gb200-20-racks-1440gpu_all_reduce.txt",
        4, 6, (6, 536870912, 75.53, 150.95), (11, 17179869184, 203.01, 405.74), 297.808, 0,
    ),
    Expected(
        # line 2: an NCCL INFO line before the table; redop none; #wrong N/A;
        # line 7: 1048576 ... 1.05 0.99; line 16: 536870912 ... 75.63 70.90; line 18: 30.9622
        "gcp-cluster-toolkit_gke-a3-high-tcpx-2node_all_gather_nocheck.txt",
        5, 10, (7, 1048576, 1.05, 0.99), (16, 536870912, 75.63, 70.90), 30.9622, 0,
        redop="none", wrong=None,
    ),
    Expected(
        # narrow size column: line 32 "1073741824 16777216 ..." starts in column 0; lines 5-9
        # are 0-byte rows; line 35: 8589934592 ... 201.32 188.73; line 37: avg 53.8932
        "gcp-cluster-toolkit_gke-a3-mega-tcpxo-2node_all_gather.txt",
        3, 31, (5, 0, 0.00, 0.00), (35, 8589934592, 201.32, 188.73), 53.8932, 0, redop="none",
    ),
    Expected(
        # no out-of-place/in-place title line; line 4: 1024 ... 0.02 0.02; line 27:
        # 8589934592 ... 350.77 328.85; line 29: avg 120.248
        "gcp-cluster-toolkit_gke-a3-ultra-gib-2node_all_gather.txt",
        2, 24, (4, 1024, 0.02, 0.02), (27, 8589934592, 350.77, 328.85), 120.248, 0,
        redop="none",
    ),
    Expected(
        # line 23 header; line 55: 8589934592 ... 180.71 338.82; line 57: avg 70.742
        "lessizzmore-create-a3mega_gce-a3-mega-vm-2node_all_reduce.txt",
        23, 31, (25, 8, 0.00, 0.00), (55, 8589934592, 180.71, 338.82), 70.742, 0,
    ),
    Expected(
        # old format, error N/A; line 17: NCCL INFO inside the table; line 18: first 0-byte
        # row; line 51: 8589934592 ... 134.44 235.26; line 53: avg 68.4048
        "microsoft-superbenchmark_a100-1node_all_reduce_oldformat.txt",
        15, 34, (18, 0, 0.00, 0.00), (51, 8589934592, 134.44, 235.26), 68.4048, 0,
        fmt="old", wrong=None, profile_rows=0,
    ),
    Expected(
        # old format with an empty redop column: line 17 "0 0 float 1.63 0.00 0.00 N/A";
        # line 50: 8589934592 268435456 float 33508 256.36 224.31; line 52: avg 58.6481
        "microsoft-superbenchmark_a100-1node_alltoall_oldformat_no-redop.txt",
        15, 34, (17, 0, 0.00, 0.00), (50, 8589934592, 256.36, 224.31), 58.6481, 0,
        fmt="old", redop="", wrong=None, profile_rows=0,
    ),
    Expected(
        # nccl-tests 2.17.9; line 19 header; line 21: 1073741824 ... 98.62 184.92; line 24:
        # 8589934592 ... 101.12 189.60; line 25: "Out of bounds values : 0 OK"; no Avg line
        "oci-hpc-oke_bm-gpu-b4-8-2node-slinky_all_reduce_v2.17.9.txt",
        19, 4, (21, 1073741824, 98.62, 184.92), (24, 8589934592, 101.12, 189.60), None, 0,
    ),
    Expected(
        # line 10 header; line 12: "8 2 float sum -1 21.33 0.00 0.00 4 ..."; line 38:
        # 536870912 ... 7.41 7.41 2.68435e+08; line 39: "108 FAILED"; line 40: avg 3.02663
        "FAILURE_unattributed_rtx3090-2node-inc_all_reduce_out-of-bounds-108.txt",
        10, 27, (12, 8, 0.00, 0.00), (38, 536870912, 7.41, 7.41), 3.02663, 108,
        wrong=268435000,
    ),
]

# fmt: on

# Logs that hold no results table at all (failures or a communicator init only).
NO_TABLE = [
    "FAILURE_gnosia93-training-on-eks_eks-efa-ofi-unresponsive-receiver_ncclRemoteError.txt",
    "FAILURE_nvidia-cloudai_test-fixture_test-nccl-failure-common-cu.txt",
    "FAILURE_stas00-ml-engineering_azure-net-ib-completion-error-12.txt",
    "FAILURE_stas00-ml-engineering_socket-connect-refused.txt",
    "WARN_gnosia93-training-on-eks_p4d-aws-ofi-nccl-init-failed_fallback-socket.txt",
]


def _id(expected: Expected) -> str:
    return expected.file.removesuffix(".txt")


def test_every_nccl_fixture_has_an_expectation() -> None:
    covered = {e.file for e in TABLES} | set(NO_TABLE)
    assert covered == {p.name for p in logs_in(NCCL_LOGS) if p.is_file()}


@pytest.mark.parametrize("expected", TABLES, ids=_id)
def test_table_rows_and_footer_match_the_log(expected: Expected) -> None:
    result = parse(expected.file)
    assert len(result.tables) == 1
    table = result.tables[0]
    assert table.start_line == expected.header_line
    assert table.has_header
    assert table.format == expected.fmt
    assert len(table.rows) == expected.rows
    for row, (line, size, algbw, busbw) in (
        (table.rows[0], expected.first_row),
        (table.rows[-1], expected.last_row),
    ):
        assert (
            row.line,
            row.size_bytes,
            row.out_of_place.alg_bw_g_bps,
            row.out_of_place.bus_bw_g_bps,
        ) == (
            line,
            size,
            pytest.approx(algbw),
            pytest.approx(busbw),
        )
    assert {row.redop for row in table.rows} == {expected.redop}
    assert table.rows[-1].out_of_place.wrong == expected.wrong
    assert table.out_of_bounds == expected.out_of_bounds
    if expected.avg is not None:
        assert table.avg_source == "footer"
        assert table.avg_bus_bandwidth_g_bps == pytest.approx(expected.avg)
    else:
        # nccl-tests' own formula: the mean busbw of every out-of-place and in-place row.
        values = [r.out_of_place.bus_bw_g_bps for r in table.rows] + [
            r.in_place.bus_bw_g_bps for r in table.rows
        ]
        assert table.avg_source == "computed"
        assert table.avg_bus_bandwidth_g_bps == pytest.approx(sum(values) / len(values))
    profile_rows = sum(r.matched_by == "profile" for r in table.rows)
    assert profile_rows == (
        expected.rows if expected.profile_rows is None else expected.profile_rows
    )
    assert not [p for p in table.problems if p.kind != "no-footer"]


@pytest.mark.parametrize("name", NO_TABLE, ids=lambda n: n.removesuffix(".txt"))
def test_failure_logs_have_no_table(name: str) -> None:
    assert parse(name).tables == []


def test_old_format_error_column_is_a_max_error_not_a_count() -> None:
    table = parse("aws-efa-eks_p4d-24xlarge-2node-eks_all_reduce_full-launcher-log.txt").tables[0]
    first = table.rows[0]
    # line 565: "... 179.1 0.00 0.00 2e-07 176.3 0.00 0.00 1e-07"
    assert first.out_of_place.time_us == pytest.approx(179.1)
    assert (first.out_of_place.error, first.in_place.error) == (
        pytest.approx(2e-7),
        pytest.approx(1e-7),
    )
    assert first.out_of_place.wrong is None
    assert table.wrong_rows == []
    assert first.root is None


def test_builtin_regex_misreads_integer_time_rows_and_the_columns_win() -> None:
    table = parse("aws-efa-eks_p4d-24xlarge-2node-eks_all_reduce_full-launcher-log.txt").tables[0]
    # lines 590-594 print the time as 13233, 24495, 47392, 92857, 183834
    assert table.regex_disagreements == [590, 591, 592, 593, 594]
    row = next(r for r in table.rows if r.line == 590)
    # line 590: "268435456 67108864 float sum 13233 20.29 38.04 5e-07 ..."
    assert (row.out_of_place.alg_bw_g_bps, row.out_of_place.bus_bw_g_bps) == (
        pytest.approx(20.29),
        pytest.approx(38.04),
    )


def test_new_format_rows_carry_root_and_in_place_values() -> None:
    row = parse("lessizzmore-create-a3mega_gce-a3-mega-vm-2node_all_reduce.txt").tables[0].rows[-1]
    # line 55: "8589934592 2147483648 float sum -1 47535 180.71 338.82 0 47743 179.92 337.35 0"
    assert (row.count, row.type, row.root) == (2147483648, "float", -1)
    assert (row.out_of_place.time_us, row.in_place.time_us) == (47535.0, 47743.0)
    assert (row.in_place.alg_bw_g_bps, row.in_place.bus_bw_g_bps, row.in_place.wrong) == (
        pytest.approx(179.92),
        pytest.approx(337.35),
        0,
    )


def test_exponent_wrong_counts_are_read_as_numbers() -> None:
    table = parse("FAILURE_unattributed_rtx3090-2node-inc_all_reduce_out-of-bounds-108.txt").tables[
        0
    ]
    by_line = {r.line: r for r in table.rows}
    assert by_line[12].out_of_place.wrong == 4  # line 12: #wrong 4
    assert by_line[30].out_of_place.wrong == 1048580  # line 30: #wrong 1.04858e+06
    assert len(table.wrong_rows) == 27
    assert table.out_of_bounds_failed  # line 39: "108 FAILED"


def test_validation_off_is_recognised_from_na() -> None:
    assert (
        parse("azure-aks-rdma-infiniband_aks-sriov-ib-2node_all_reduce_nocheck.txt")
        .tables[0]
        .validation
        is False
    )
    assert (
        parse("coreweave-nccl-tests_gb200-nvl72-single-rack_all_reduce.txt").tables[0].validation
        is True
    )


def test_peak_is_the_highest_row_and_sustained_the_highest_two_adjacent_sizes_reach() -> None:
    table = parse("coreweave-nccl-tests_gb200-nvl72-single-rack_all_reduce.txt").tables[0]
    # line 10: 4294967296 ... algbw 425.49 busbw 839.16 beats line 11's 423.16 / 834.57
    assert table.peak_bus_bandwidth_g_bps == pytest.approx(839.16)
    assert table.sustained_bus_bandwidth_g_bps == pytest.approx(834.57)
    assert table.sustained_alg_bandwidth == pytest.approx(423.16)


def test_header_facts_of_nccl_tests_2_17_9() -> None:
    result = parse("oci-hpc-oke_bm-gpu-b4-8-2node-slinky_all_reduce_v2.17.9.txt")
    assert result.nccl_tests_version == "2.17.9"  # line 7
    assert (
        result.collective == "all_reduce"
    )  # line 8: "# Collective test starting: all_reduce_perf"
    assert result.nccl_version == "2.29.3+cuda13.1"  # line 16
    assert result.parameters["maxBytes"] == "8589934592"  # line 9
    assert [r.rank for r in result.ranks] == [0, 7, 8, 15]  # lines 12-15
    assert result.hosts == [
        "oke-chfmqtu3dcq-nfgm3eqopla-sc7rl5e2tga-0",
        "oke-chfmqtu3dcq-nfgm3eqopla-sc7rl5e2tga-1",
    ]
    assert result.gpus == ["NVIDIA A100-SXM4-40GB"]
    assert result.tables[0].complete  # "# Collective test concluded" and the out-of-bounds line


@pytest.mark.parametrize(
    ("name", "hosts", "gpu"),
    [
        pytest.param(
            "lessizzmore-create-a3mega_gce-a3-mega-vm-2node_all_reduce.txt",
            ["ztan-mig-235z", "ztan-mig-gq73"],  # lines 5 and 13
            "NVIDIA H100 80GB HBM3",
            id="rank-lines-with-group",
        ),
        pytest.param(
            "aws-efa-eks_p4d-24xlarge-2node-eks_all_reduce_full-launcher-log.txt",
            ["nccl-tests-efa-16-worker-0", "nccl-tests-efa-16-worker-1"],  # lines 15 and 23
            "A100-SXM4-40GB",
            id="old-format-rank-lines-without-group",
        ),
        pytest.param(
            "coreweave-nccl-tests_gb200-nvl72-single-rack_all_reduce.txt",
            ["slurm-gb200-207-171"],  # line 2: only the last rank, 71
            "NVIDIA Graphics Device",
            id="only-the-last-rank-line",
        ),
    ],
)
def test_rank_lines_give_hosts_and_gpus(name: str, hosts: list[str], gpu: str) -> None:
    result = parse(name)
    assert result.hosts == hosts
    assert result.gpus == [gpu]


def test_full_launcher_log_keeps_transport_and_nccl_version() -> None:
    result = parse("aws-efa-eks_p4d-24xlarge-2node-eks_all_reduce_full-launcher-log.txt")
    assert result.network_transports == [
        "AWS Libfabric"
    ]  # line 35: "NCCL INFO Using network AWS Libfabric"
    assert result.nccl_version == "2.9.9+cuda11.2"  # line 36
    assert result.parameters["validation"] == "1"  # line 12


def test_socket_fallback_transport_is_recorded() -> None:
    result = parse("WARN_gnosia93-training-on-eks_p4d-aws-ofi-nccl-init-failed_fallback-socket.txt")
    assert result.network_transports == ["Socket"]  # lines 71, 74, 75


def test_elision_is_counted() -> None:
    table = parse("aws-awsome-distributed-training_eks-p5-mpijob_all_reduce_excerpt.txt").tables[0]
    assert table.elisions == 1  # line 6: "..."


def test_missing_footer_is_a_problem_naming_the_last_row() -> None:
    table = parse("aws-awsome-distributed-training_p5-48xlarge-2node_all_reduce.txt").tables[0]
    assert not table.complete
    [problem] = table.problems
    assert problem.kind == "no-footer"
    assert problem.line == 35
    assert "truncated" in problem.message


def test_user_profile_regex_is_the_row_matcher() -> None:
    from krm_fn.report.logprofiles import compile_profile

    # A profile that only accepts rows of 1 GiB and more: the others are read by the columns.
    profile = compile_profile(
        "large-only",
        {
            "timestamp": {"layout": "2006-01-02T15:04:05Z"},
            "patterns": {
                "bandwidthResult": {
                    "regex": r"^\s*(?P<size>\d{10,})\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+"
                    r"(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)",
                    "units": {"busBW": "GB/s", "size": "B"},
                }
            },
        },
        "input",
    )
    name = "coreweave-nccl-tests_gb200-nvl72-single-rack_all_reduce.txt"
    rows = parse_nccl(source(nccl_log(name)).lines, profile).tables[0].rows
    # line 7 is 536870912 (9 digits); lines 8-11 are 1073741824 and up
    assert [r.matched_by for r in rows] == ["fallback", "profile", "profile", "profile", "profile"]
    assert rows[-1].out_of_place.bus_bw_g_bps == pytest.approx(834.57)
