//! What the engine's examples share (`mod common;` in each example that needs it).

/// The command line's positional arguments as counts, each argument not given taking its
/// default from `defaults` (arguments past them are parsed and ignored).
pub fn counts<const N: usize>(defaults: [usize; N]) -> Result<[usize; N], std::num::ParseIntError> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    Ok(std::array::from_fn(|i| {
        args.get(i).copied().unwrap_or(defaults[i])
    }))
}
