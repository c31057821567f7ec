//! The router's FIB: the Bloom-filter tables of `nexthop_lookup::ip` (IPv4 Bloomfwd with a
//! 2^24 direct lookup array — a route a packet matches is mostly one array read — and IPv6
//! Bloomfwd with DP-CPE levels), their next hops naming [`Via`]s.
//!
//! # Overview
//! - The tables map an address to a small integer next hop; here each distinct [`Via`] is
//!   given one (interned, counted by the routes using it, its number reused once none does), so
//!   a table of 512K routes through a few hundred gateways keeps a few hundred next hops, and
//!   a route's label (an ASN in a route file, a gateway from netlink) never has to fit the
//!   tables' 30 bits.
//! - Changes go through the control side ([`Fib::insert`], [`Fib::remove`]); a refused change
//!   leaves everything as it was. The pipeline applies them between batches, so a lookup
//!   never sees a half-made change.

use hashbrown::HashMap;
use nexthop_lookup::ip::{Bloomfwd4, Bloomfwd6, NextHop, Route, DEFAULT_FPR, MAX_NEXT_HOP, NO_ROUTE};

use super::route::{Prefix, RouteError, Via};

/// Expansion levels DP-CPE chooses for a table's IPv6 routes (the `ip-lpm` experiment's best).
const IPV6_LEVELS: usize = 8;
/// The IPv4 table's direct array width: /24, so only routes longer than /24 (few, and few
/// packets' destinations) go through a Bloom filter (`bloomfwd-dla24` in `ip-lpm`).
const IPV4_DLA_BITS: u8 = 24;

/// The distinct vias of the routes, each with its next-hop number.
#[derive(Debug, Default, Clone)]
struct Vias {
    /// By next hop: the via and how many routes use it (`None`: free).
    list: Vec<Option<(Via, u32)>>,
    by_via: HashMap<Via, NextHop>,
    free: Vec<NextHop>,
}

impl Vias {
    /// The next hop of `via`, one more route counted on it.
    fn acquire(&mut self, via: Via) -> Result<NextHop, RouteError> {
        if let Some(&hop) = self.by_via.get(&via) {
            if let Some((_, n)) = &mut self.list[hop as usize] {
                *n += 1;
            }
            return Ok(hop);
        }
        let hop = match self.free.pop() {
            Some(h) => h,
            None if self.list.len() as u64 > u64::from(MAX_NEXT_HOP) => return Err(RouteError::TooManyNextHops(MAX_NEXT_HOP)),
            None => {
                self.list.push(None);
                (self.list.len() - 1) as NextHop
            }
        };
        self.list[hop as usize] = Some((via, 1));
        self.by_via.insert(via, hop);
        Ok(hop)
    }

    /// One route fewer on `hop`; freed when none is left.
    fn release(&mut self, hop: NextHop) {
        let Some(slot) = self.list.get_mut(hop as usize) else { return };
        let Some((via, n)) = slot else { return };
        *n -= 1;
        if *n == 0 {
            self.by_via.remove(via);
            *slot = None;
            self.free.push(hop);
        }
    }

    fn get(&self, hop: NextHop) -> Option<Via> {
        self.list.get(hop as usize).copied().flatten().map(|(v, _)| v)
    }
}

/// Routes of both families.
#[derive(Debug, Clone)]
pub struct Fib {
    v4: Bloomfwd4,
    v6: Bloomfwd6,
    vias: Vias,
}

impl Default for Fib {
    fn default() -> Fib {
        Fib { v4: Bloomfwd4::with_dla_bits(IPV4_DLA_BITS, DEFAULT_FPR), v6: Bloomfwd6::default(), vias: Vias::default() }
    }
}

impl Fib {
    /// An empty FIB (IPv6 levels every 8 bits; [`Fib::with_routes`] chooses them for a table).
    pub fn new() -> Fib {
        Fib::default()
    }

    /// A FIB holding `routes`, its IPv4 filters sized and its IPv6 levels chosen (DP-CPE) for
    /// them.
    ///
    /// # Errors
    /// The first route refused; nothing is built.
    pub fn with_routes(routes: &[(Prefix, Via)]) -> Result<Fib, RouteError> {
        // A prefix given twice is one route, through the last via given.
        let mut last: HashMap<Prefix, usize> = HashMap::with_capacity(routes.len());
        for (i, (prefix, _)) in routes.iter().enumerate() {
            last.insert(*prefix, i);
        }
        let mut vias = Vias::default();
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for (i, &(prefix, via)) in routes.iter().enumerate() {
            if last.get(&prefix) != Some(&i) {
                continue;
            }
            let next_hop = vias.acquire(via)?;
            match prefix {
                Prefix::V4 { addr, len } => v4.push(Route { prefix: addr, len, next_hop }),
                Prefix::V6 { addr, len } => v6.push(Route { prefix: addr, len, next_hop }),
            }
        }
        let t4 = Bloomfwd4::from_routes_with(&v4, IPV4_DLA_BITS, DEFAULT_FPR)?;
        let t6 = if v6.is_empty() { Bloomfwd6::default() } else { Bloomfwd6::with_dp_cpe(&v6, IPV6_LEVELS, DEFAULT_FPR)? };
        Ok(Fib { v4: t4, v6: t6, vias })
    }

    /// Installs (or replaces) the route to `prefix`. Returns the via it replaced.
    ///
    /// # Errors
    /// The tables' refusal (an IPv6 route expanding too far), too many next hops; nothing
    /// changes.
    pub fn insert(&mut self, prefix: Prefix, via: Via) -> Result<Option<Via>, RouteError> {
        let hop = self.vias.acquire(via)?;
        let old = match prefix {
            Prefix::V4 { addr, len } => self.v4.insert(addr, len, hop),
            Prefix::V6 { addr, len } => self.v6.insert(addr, len, hop),
        };
        match old {
            Err(e) => {
                self.vias.release(hop);
                Err(e.into())
            }
            Ok(None) => Ok(None),
            Ok(Some(old)) => {
                let was = self.vias.get(old);
                self.vias.release(old);
                Ok(was)
            }
        }
    }

    /// Removes the route to `prefix`. Returns its via.
    ///
    /// # Errors
    /// [`RouteError::NoSuchRoute`]; nothing changes.
    pub fn remove(&mut self, prefix: Prefix) -> Result<Via, RouteError> {
        let hop = match prefix {
            Prefix::V4 { addr, len } => self.v4.remove(addr, len),
            Prefix::V6 { addr, len } => self.v6.remove(addr, len),
        }
        .map_err(|_| RouteError::NoSuchRoute(prefix))?;
        let via = self.vias.get(hop);
        self.vias.release(hop);
        via.ok_or(RouteError::NoSuchRoute(prefix))
    }

    /// Routes installed, both families.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// Whether no route is installed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Distinct vias the routes use.
    pub fn vias(&self) -> usize {
        self.vias.by_via.len()
    }

    /// The via of next hop `hop` (`None` for [`NO_ROUTE`]).
    #[inline]
    pub fn via(&self, hop: NextHop) -> Option<Via> {
        if hop == NO_ROUTE {
            return None;
        }
        self.vias.get(hop)
    }

    /// The via of the longest route covering IPv4 address `dst`.
    pub fn lookup_v4(&self, dst: u32) -> Option<Via> {
        self.via(self.v4.lookup(dst))
    }

    /// The via of the longest route covering IPv6 address `dst`.
    pub fn lookup_v6(&self, dst: u128) -> Option<Via> {
        self.via(self.v6.lookup(dst))
    }

    /// Next hops of IPv4 `dsts`, batched (hashed with SIMD and prefetched).
    pub fn lookup_v4_batch(&self, dsts: &[u32], out: &mut [NextHop]) {
        self.v4.lookup_batch(dsts, out);
    }

    /// Next hops of IPv6 `dsts`, batched.
    pub fn lookup_v6_batch(&self, dsts: &[u128], out: &mut [NextHop]) {
        self.v6.lookup_batch(dsts, out);
    }
}
