// The page's formatting: bytes (B, KiB, MiB, GiB, two decimals, the text the Rust side prints),
// counts, durations and the width of query columns.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bytes,
  duration,
  exact,
  pct,
  plural,
  shortCpp,
} from "../../www/src/ui/format";
import { columnWidths } from "../../www/src/views/queries";

test("one unit set, B to GiB, two decimals", () => {
  assert.equal(bytes(0), "0 B");
  assert.equal(bytes(1023), "1023 B");
  assert.equal(bytes(1024), "1.00 KiB");
  assert.equal(bytes(1536), "1.50 KiB");
  assert.equal(bytes(5 * 2 ** 20 + 2 ** 19), "5.50 MiB");
  assert.equal(bytes(123.4 * 2 ** 20), "123.40 MiB");
  assert.equal(bytes(3 * 2 ** 30), "3.00 GiB");
});

test("no TiB: GiB is the largest unit, as in Rust", () => {
  assert.equal(bytes(2 ** 40), "1024.00 GiB");
  assert.equal(bytes(1536 * 2 ** 30), "1536.00 GiB");
});

test("rounds like Rust's {:.2}: to nearest, ties to even", () => {
  assert.equal(bytes(1152), "1.12 KiB"); // 1.125: tie, 2 is even
  assert.equal(bytes(3456), "3.38 KiB"); // 3.375: tie, 7 is odd
  assert.equal(bytes(1153), "1.13 KiB"); // just above the tie
  assert.equal(bytes(2 ** 20 - 1), "1024.00 KiB"); // rounds up into the next hundred
});

test("negative values carry the sign in front", () => {
  assert.equal(bytes(-1536), "-1.50 KiB");
  assert.equal(bytes(-1152), "-1.12 KiB");
  assert.equal(bytes(-5), "-5 B");
});

test("exact bytes and shares", () => {
  assert.equal(exact(23281500672), "23,281,500,672 B");
  assert.equal(pct(0.1234), "12.3%");
});

test("counts read with separators and the right number", () => {
  assert.equal(plural(1, "row"), "1 row");
  assert.equal(plural(0, "row"), "0 rows");
  assert.equal(plural(1313, "block"), "1,313 blocks");
  assert.equal(plural(2, "event does", "events do"), "2 events do");
});

test("durations in µs, ms or s", () => {
  assert.equal(duration(850), "850 µs");
  assert.equal(duration(12_430), "12.4 ms");
  assert.equal(duration(7_635_500), "7.64 s");
});

test("query columns are as wide as their text, within limits", () => {
  const w = columnWidths(
    ["id", "filename"],
    [[1, "/home/lin/cs336/assignment2-systems/cs336_systems/model.py"]],
  );
  assert.equal(w[0], 70);
  assert.ok(w[1] > 400 && w[1] <= 560, String(w[1]));
  // Counts are measured with their separators.
  assert.equal(
    columnWidths(["n"], [[1234567890123]], { n: "count" })[0],
    Math.round("1,234,567,890,123".length * 7.6 + 22),
  );
});

test("C++ names fold their template arguments and drop anonymous namespaces", () => {
  assert.equal(
    shortCpp(
      "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::Tensor (c10::ArrayRef<long>), &at::empty>, at::Tensor, c10::guts::typelist::typelist<c10::ArrayRef<long> > >, at::Tensor (c10::ArrayRef<long>)>::call (RegisterCUDA.cpp)",
    ),
    "c10::impl::wrap_kernel_functor_unboxed_<…>::call (RegisterCUDA.cpp)",
  );
  assert.equal(
    shortCpp(
      "at::(anonymous namespace)::structured_sigmoid_out_functional::set_output_raw_strided",
    ),
    "at::structured_sigmoid_out_functional::set_output_raw_strided",
  );
  assert.equal(shortCpp("forward (model.py:12)"), "forward (model.py:12)");
  assert.equal(shortCpp("a::operator<< (x.cpp)"), "a::operator<< (x.cpp)");
  assert.equal(
    shortCpp("std::vector<int>::push_back"),
    "std::vector<…>::push_back",
  );
});

test("a C++ name the engine cut short folds from its open list to the file", () => {
  assert.equal(
    shortCpp(
      "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::… (RegisterCUDA.cpp)",
    ),
    "c10::impl::wrap_kernel_functor_unboxed_<…> (RegisterCUDA.cpp)",
  );
});
