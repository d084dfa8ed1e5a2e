//! The order a run's files are read and combined in, the same for the CLI (`ranks`, `report`
//! over a folder) and the page (a dropped folder, `loadMany`): by the rank the path names (the
//! last one: `run/rank3/memory_snapshot.pickle` is rank 3), files without one last; then by file
//! name; then by the whole path (same-named files in two folders); then as given.

use super::summary::rank_from_name;

/// The indices of `paths` in run order (a permutation of `0..paths.len()`).
pub fn run_order<S: AsRef<str>>(paths: &[S]) -> Vec<usize> {
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut keyed: Vec<_> =
        paths.iter().map(AsRef::as_ref).enumerate().map(|(i, p)| (rank_from_name(p).unwrap_or(i64::MAX), base(p), p, i)).collect();
    keyed.sort();
    keyed.into_iter().map(|k| k.3).collect()
}

#[cfg(test)]
mod tests {
    use super::run_order;

    #[test]
    fn ranks_then_names_then_paths() {
        let names = [
            "b/memory_snapshot.pickle",
            "run/rank10/memory_snapshot.pickle",
            "a/memory_snapshot.pickle",
            "run/rank3/memory_snapshot.pickle",
            "rank2.pickle",
            "zeta.pickle",
            "x/rank_1.pkl",
        ];
        let ordered: Vec<&str> = run_order(&names).into_iter().map(|i| names[i]).collect();
        assert_eq!(
            ordered,
            [
                "x/rank_1.pkl",
                "rank2.pickle",
                "run/rank3/memory_snapshot.pickle",
                "run/rank10/memory_snapshot.pickle",
                "a/memory_snapshot.pickle",
                "b/memory_snapshot.pickle",
                "zeta.pickle",
            ]
        );
        // The same path twice keeps the order given.
        assert_eq!(run_order(&["a.pickle", "a.pickle"]), [0, 1]);
    }
}
