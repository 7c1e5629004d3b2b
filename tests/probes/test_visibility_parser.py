"""CUDA_VISIBLE_DEVICES parsed with the driver's rules, checked property by property."""

from hypothesis import given, strategies as st

from gpudoctor.probes.visibility import parse_visible_devices, strtoul_prefix

UUIDS = [f"GPU-{c}{i}aaaaaa-0000-0000-0000-000000000000" for i, c in enumerate("abcd")]
COUNT = 4

valid_lists = st.lists(st.integers(0, COUNT - 1), min_size=1, max_size=COUNT, unique=True)
invalid_entries = st.one_of(st.integers(-99, -1).map(str), st.integers(COUNT, 99).map(str),
                            st.sampled_from(["", "gpu", "x1", "-", " "]))


def selected(value, count=COUNT, uuids=UUIDS):
    return parse_visible_devices(value, uuids, count)[1]


def test_unset_means_every_gpu_and_empty_means_none():
    assert selected(None) is None
    assert selected("") == []
    assert selected("-1") == []


@given(valid_lists)
def test_distinct_valid_indices_are_kept_in_the_order_written(indices):
    assert selected(",".join(map(str, indices))) == indices


@given(valid_lists, invalid_entries, st.lists(st.integers(0, COUNT - 1), max_size=3))
def test_the_first_invalid_entry_ends_the_list(indices, bad, after):
    value = ",".join(map(str, indices + [bad] + after))
    entries, chosen, stopped_at, _ = parse_visible_devices(value, UUIDS, COUNT)
    assert chosen == indices
    assert stopped_at == bad
    assert entries[-1].valid is False


@given(valid_lists, st.data())
def test_a_repeated_device_hides_every_gpu(indices, data):
    repeated = data.draw(st.sampled_from(indices))
    value = ",".join(map(str, indices + [repeated]))
    entries, chosen, _, duplicates = parse_visible_devices(value, UUIDS, COUNT)
    assert chosen == [] and duplicates == [str(repeated)]


def test_entries_are_read_like_strtoul():
    assert strtoul_prefix("1gpu2") == 1 and strtoul_prefix(" 2") == -1 and strtoul_prefix("+3") == 3
    assert selected("1gpu2,2ampere") == [1, 2]
    assert selected(" 1 , 2 ") == [1, 2]


def test_out_of_range_index_on_a_four_gpu_machine_hides_all():
    entries, chosen, stopped_at, _ = parse_visible_devices("5", UUIDS, COUNT)
    assert chosen == [] and stopped_at == "5" and "no GPU 5" in entries[0].reason


def test_uuid_prefixes_select_unique_gpus_and_stop_at_unknown_or_ambiguous():
    assert selected("GPU-b1,GPU-d3") == [1, 3]
    assert selected("GPU-b1,GPU-zz,GPU-a0") == [1]
    assert selected("GPU-,GPU-a0") == []  # "GPU-" matches all four: ambiguous, CUDA stops there
    assert selected("GPU-a0,1") == [0]  # a UUID list takes no indices
    assert selected("GPU-a0,GPU-a0") == []


def test_mig_ids_are_accepted_but_not_resolved_to_gpus():
    entries, chosen, stopped, _ = parse_visible_devices("MIG-abc,MIG-def", UUIDS, COUNT)
    assert chosen is None and stopped is None and [e.kind for e in entries] == ["mig", "mig"]


@given(st.text(max_size=60))
def test_garbage_never_raises_and_never_selects_a_missing_gpu(value):
    entries, chosen, stopped_at, duplicates = parse_visible_devices(value, UUIDS, COUNT)
    assert chosen is None or all(0 <= i < COUNT for i in chosen)
    assert chosen is None or len(set(chosen)) == len(chosen)
