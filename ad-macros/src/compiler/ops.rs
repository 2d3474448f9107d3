//! The operations `#[differentiable]` knows, by name.

/// Scalar functions with a derivative rule, and whether the rule reads the
/// output (`tanh`: `1 - y^2`) rather than the input (`sin`: `cos x`).
pub const UNARY: &[(&str, bool)] = &[
    ("sin", false),
    ("cos", false),
    ("tan", true),
    ("asin", false),
    ("acos", false),
    ("atan", false),
    ("sinh", false),
    ("cosh", false),
    ("tanh", true),
    ("asinh", false),
    ("acosh", false),
    ("atanh", false),
    ("exp", true),
    ("exp2", true),
    ("exp_m1", true),
    ("ln", false),
    ("ln_1p", false),
    ("log2", false),
    ("log10", false),
    ("sqrt", true),
    ("cbrt", true),
    ("abs", false),
    ("recip", true),
    ("to_degrees", false),
    ("to_radians", false),
];

/// Two-argument scalar functions.
pub const BINARY: &[&str] = &["atan2", "powf", "hypot", "max", "min", "log"];

/// Methods whose result carries no derivative (shapes, tests, rounding).
pub const INACTIVE: &[&str] = &[
    "len",
    "nrows",
    "ncols",
    "shape",
    "dim",
    "raw_dim",
    "ndim",
    "is_empty",
    "len_of",
    "count",
    // An iterator's positions and tests: `x.iter().position(|&v| v == m)`
    // (an argmax), `x.iter().any(|v| *v > 0.0)`.
    "position",
    "rposition",
    "any",
    "all",
    "strides",
    "is_standard_layout",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_positive",
    "is_sign_negative",
    // Whether an `Option` holds a value (an `Option` field, `p.bias`).
    "is_some",
    "is_none",
    "is_some_and",
    "is_none_or",
    "signum",
    "floor",
    "ceil",
    "round",
    "trunc",
    "partial_cmp",
    "total_cmp",
    "to_bits",
];

pub fn unary(name: &str) -> Option<&'static str> {
    UNARY.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

pub fn uses_output(name: &str) -> bool {
    UNARY.iter().any(|(n, out)| *n == name && *out)
}

pub fn binary(name: &str) -> Option<&'static str> {
    BINARY.iter().find(|n| **n == name).copied()
}

/// Every method name a body may call on an active value, for messages.
pub fn supported_methods() -> String {
    let mut names: Vec<&str> = UNARY.iter().map(|(n, _)| *n).collect();
    names.extend(BINARY);
    names.extend([
        "powi",
        "pow2",
        "clamp",
        "mul_add",
        "dot",
        "t",
        "reversed_axes",
        "diag",
        "sum",
        "mean",
        "product",
        "sum_axis",
        "mean_axis",
        "var",
        "std",
        "var_axis",
        "std_axis",
        "map_axis",
        "mapv",
        "map",
        "fold",
        "row",
        "column",
        "slice",
        "view",
        "to_owned",
        "to_vec",
        "clone",
        "insert_axis",
        "into_shape_with_order",
        "unwrap",
        "expect",
    ]);
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A scalar function whose result is a float of the argument's type.
pub fn returns_float(name: &str) -> bool {
    unary(name).is_some()
        || BINARY.contains(&name)
        || matches!(
            name,
            "powi" | "mul_add" | "signum" | "floor" | "ceil" | "round" | "trunc"
        )
}

/// A scalar method the macro differentiates (or knows to be inactive),
/// callable as a path (`F::exp(x)`).
pub fn is_scalar_method(name: &str) -> bool {
    unary(name).is_some()
        || BINARY.contains(&name)
        || INACTIVE.contains(&name)
        || matches!(name, "powi" | "mul_add")
}
