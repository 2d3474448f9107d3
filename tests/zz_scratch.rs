#[path = "../ad-macros/src/compiler/mod.rs"]
#[allow(dead_code, unused_imports)]
mod compiler;
#[test]
fn show() {
    let src = std::fs::read_to_string("/tmp/scratch/in.rs").unwrap();
    let item: proc_macro2::TokenStream = src.parse().unwrap();
    let out = compiler::differentiable(quote::quote!(), item);
    let file: syn::File = syn::parse2(out).unwrap();
    std::fs::write("/tmp/scratch/out.rs", prettyplease::unparse(&file)).unwrap();
}
