//! The showcase's data and model on a tiny dataset: parsing, a gradient
//! check, and one training step that lowers the loss. (The full run is the
//! README's main job, not a test.)

#[path = "../examples/json_bags/by_hand.rs"]
mod by_hand;
#[path = "../examples/json_bags/data.rs"]
mod data;
#[path = "../examples/json_bags/model.rs"]
mod model;

use ad::check::{assert_gradient, Flat};
use ad::parallel::sum_gradients;
use ad::Adam;

fn tiny() -> Vec<data::Sample> {
    data::parse(&data::generate_json(12, 5)).expect("the generated JSON parses")
}

#[test]
fn documents_parse_into_bags_of_every_size() {
    let samples = tiny();
    assert_eq!(samples.len(), 12);
    let sizes: Vec<usize> = samples.iter().map(|s| s.visits.nrows()).collect();
    assert!(
        sizes.iter().min() != sizes.iter().max(),
        "bags of different sizes: {sizes:?}"
    );
    assert!(samples
        .iter()
        .all(|s| s.visits.ncols() == 3 && s.purchases.ncols() == 2));
    assert!(
        samples.iter().any(|s| s.purchases.nrows() == 0),
        "an empty bag too"
    );
    assert!(data::parse("{\"not\": \"a list\"}").is_err());
}

#[test]
fn the_model_gradient_matches_finite_differences() {
    let m = model::Model::new(1);
    for s in tiny().iter().take(4) {
        let (value, g) = model::sample_gradient(&m, s);
        let f = |m: &model::Model| model::loss(m, &s.visits, &s.purchases, &s.scalars, s.label);
        assert_eq!(value, f(&m));
        assert_gradient(f, &m, &g.to_flat());
    }
}

#[test]
fn the_model_gradient_matches_the_hand_written_one() {
    let m = model::Model::new(4);
    for s in &tiny() {
        let (value, g) = model::sample_gradient(&m, s);
        let (hand_value, hand) = by_hand::sample_gradient(&m, s);
        assert!((value - hand_value).abs() < 1e-12);
        for (a, b) in g.to_flat().iter().zip(hand.to_flat()) {
            assert!((a - b).abs() < 1e-12, "generated {a}, by hand {b}");
        }
    }
}

#[test]
fn parallel_gradients_equal_serial_ones_exactly() {
    let m = model::Model::new(2);
    let samples = tiny();
    let (loss, grad) = sum_gradients(&samples, |s| model::sample_gradient(&m, s)).unwrap();
    let mut serial = model::sample_gradient(&m, &samples[0]);
    for s in &samples[1..] {
        let (l, g) = model::sample_gradient(&m, s);
        serial.0 += l;
        ad::TangentSpace::add_assign(&mut serial.1, &g);
    }
    assert_eq!(loss, serial.0);
    assert_eq!(grad.to_flat(), serial.1.to_flat());
}

#[test]
fn a_training_step_lowers_the_loss() {
    let mut m = model::Model::new(3);
    let samples = tiny();
    let total =
        |m: &model::Model| sum_gradients(&samples, |s| model::sample_gradient(m, s)).unwrap();
    let (before, g) = total(&m);
    let mut adam = Adam::new(0.01);
    adam.step(&mut m, &g);
    let (after, _) = total(&m);
    assert!(after < before, "{after} >= {before}");
}
