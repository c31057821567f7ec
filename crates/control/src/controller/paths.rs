//! Shortest paths and the flood tree over the switch graph: breadth-first, links taken in file
//! order (so the same topology always gives the same paths).
//!
//! Unicast toward switch d follows the breadth-first tree rooted at d: every switch's next hop
//! is its parent there, so paths toward d never loop. Group frames follow one tree, rooted at
//! the first switch; links off it carry no floods.

use std::collections::VecDeque;

/// The breadth-first tree from `root` over `n` switches joined by `links` (pairs of switch
/// numbers): for each switch, the link to its parent (`None` for the root and for switches
/// it does not reach).
fn tree(n: usize, links: &[(usize, usize)], root: usize) -> Vec<Option<usize>> {
    let mut parent = vec![None; n];
    let mut seen = vec![false; n];
    seen[root] = true;
    let mut queue = VecDeque::from([root]);
    while let Some(u) = queue.pop_front() {
        for (l, &(a, b)) in links.iter().enumerate() {
            let v = match (a == u, b == u) {
                (true, _) => b,
                (_, true) => a,
                _ => continue,
            };
            if !seen[v] {
                seen[v] = true;
                parent[v] = Some(l);
                queue.push_back(v);
            }
        }
    }
    parent
}

/// `next[t][d]`: the link switch t sends on toward switch d (`None` when t is d or does not
/// reach it).
pub fn next_hops(n: usize, links: &[(usize, usize)]) -> Vec<Vec<Option<usize>>> {
    let trees: Vec<Vec<Option<usize>>> = (0..n).map(|d| tree(n, links, d)).collect();
    (0..n).map(|t| trees.iter().map(|tree| tree[t]).collect()).collect()
}

/// For each link, whether it is on the flood tree rooted at switch 0.
pub fn flood_tree(n: usize, links: &[(usize, usize)]) -> Vec<bool> {
    let mut on = vec![false; links.len()];
    if n > 0 {
        for l in tree(n, links, 0).into_iter().flatten() {
            on[l] = true;
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Follows next hops from t toward d: the switches visited, or `None` on a loop.
    fn walk(next: &[Vec<Option<usize>>], links: &[(usize, usize)], mut t: usize, d: usize) -> Option<Vec<usize>> {
        let mut path = vec![t];
        while t != d {
            let (a, b) = links[next[t][d]?];
            t = if a == t { b } else { a };
            if path.contains(&t) {
                return None;
            }
            path.push(t);
        }
        Some(path)
    }

    /// Hop counts from `s` by Bellman–Ford relaxation: the oracle.
    fn distances(n: usize, links: &[(usize, usize)], s: usize) -> Vec<Option<usize>> {
        let mut d = vec![None; n];
        d[s] = Some(0);
        for _ in 0..n {
            for &(a, b) in links {
                for (u, v) in [(a, b), (b, a)] {
                    if let Some(du) = d[u] {
                        if d[v].is_none_or(|dv| du + 1 < dv) {
                            d[v] = Some(du + 1);
                        }
                    }
                }
            }
        }
        d
    }

    #[test]
    fn a_triangle_goes_direct_and_floods_on_two_links() {
        let links = [(0, 1), (1, 2), (2, 0)];
        let next = next_hops(3, &links);
        assert_eq!((next[0][1], next[0][2], next[1][2], next[2][0]), (Some(0), Some(2), Some(1), Some(2)));
        assert_eq!(flood_tree(3, &links), [true, false, true]);
    }

    proptest! {
        #[test]
        fn next_hops_take_shortest_loop_free_paths_and_the_tree_spans(
            n in 1usize..8,
            raw in prop::collection::vec((0usize..8, 0usize..8), 0..16),
        ) {
            let links: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).filter(|(a, b)| a != b).collect();
            let next = next_hops(n, &links);
            for t in 0..n {
                let dist = distances(n, &links, t);
                for d in 0..n {
                    match dist[d] {
                        Some(k) => prop_assert_eq!(walk(&next, &links, t, d).map(|p| p.len() - 1), Some(k)),
                        None => prop_assert_eq!(next[t][d], None),
                    }
                }
            }
            // The tree: one link per switch the root reaches, but the root.
            let reached = distances(n, &links, 0).iter().filter(|d| d.is_some()).count();
            prop_assert_eq!(flood_tree(n, &links).iter().filter(|&&on| on).count(), reached - 1);
        }
    }
}
