//! Every rejection is a compile error at the user's code that says what to
//! do instead; the `.stderr` files pin the messages.

#[test]
fn rejections() {
    let t = trybuild::TestCases::new();
    for category in ["args", "signature", "body", "rules", "fallback", "derive"] {
        t.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
}
