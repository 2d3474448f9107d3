//! The showcase and benchmark models: generated gradients against the
//! hand-written ones and finite differences, at every batch and bag size.

#[macro_use]
mod support;

#[path = "../examples/models/mod.rs"]
mod models;

use ad::check::{close, Flat};
use support::random;

as_case!(
    mlp_x = mlp_loss_active_x,
    mlp_loss_active_x_grad,
    mlp_loss_active_x_vjp,
    mlp_loss_active_x_jvp
);
as_case!(bag = bag_loss, bag_loss_grad, bag_loss_vjp, bag_loss_jvp);

#[test]
fn mlp_matches_hand_written_gradient_at_every_batch_size() {
    for batch in [1, 8, 64] {
        let (w1, b1, w2) = (random((32, 16), 1), random(32, 2), random(32, 3));
        let (x, y) = (random((batch, 16), 4), random(batch, 5));
        let (value, (g_w1, g_b1, g_w2, _, _)) = models::mlp_loss_grad(&w1, &b1, &w2, &x, &y);
        let (hand_value, hand) = models::mlp_loss_by_hand(&w1, &b1, &w2, &x, &y);
        assert_eq!(value, models::mlp_loss(&w1, &b1, &w2, &x, &y));
        assert!(close(value, hand_value, 1e-12));
        let generated = (g_w1, g_b1, g_w2).to_flat();
        assert!(generated
            .iter()
            .zip(hand.to_flat())
            .all(|(a, b)| close(*a, b, 1e-10)));
    }
    let (x, y) = (random((5, 16), 6), random(5, 7));
    check_scalar!(mlp_x; ref w1 d1 = random((4, 16), 8), ref b1 d2 = random(4, 9), ref w2 d3 = random(4, 10), ref x dx = x; &y);
}

#[test]
fn bag_model_matches_hand_written_gradient_for_every_bag_size() {
    let (w1, b1, w2, b2) = (random((8, 16), 11), random(16, 12), random(16, 13), 0.1);
    for n in [1, 2, 17, 50] {
        let bag = random((n, 8), 100 + n as u64);
        for label in [0.0, 1.0] {
            let (value, (g_w1, g_b1, g_w2, g_b2, _, _)) =
                models::bag_loss_grad(&w1, &b1, &w2, b2, &bag, label);
            let (hand_value, hand) = models::bag_loss_by_hand(&w1, &b1, &w2, b2, &bag, label);
            assert_eq!(value, models::bag_loss(&w1, &b1, &w2, b2, &bag, label));
            assert!(close(value, hand_value, 1e-12));
            let generated = (g_w1, g_b1, g_w2, g_b2).to_flat();
            assert!(generated
                .iter()
                .zip(hand.to_flat())
                .all(|(a, b)| close(*a, b, 1e-10)));
            check_scalar!(bag; ref w1 d1 = w1.clone(), ref b1 d2 = b1.clone(), ref w2 d3 = w2.clone(), val b2 d4 = b2; &bag, label);
        }
    }
}

#[test]
fn loop_models_match_their_hand_written_gradients() {
    for n in [2, 10, 100] {
        let x = random(n, 20);
        let (value, (g,)) = models::rosenbrock_grad(&x);
        let (hand_value, hand) = models::rosenbrock_by_hand(&x);
        assert_eq!(value, models::rosenbrock(&x));
        assert!(close(value, hand_value, 1e-12));
        assert!(g.iter().zip(&hand).all(|(a, b)| close(*a, *b, 1e-10)));
    }
    for steps in [0, 1, 10] {
        let (w, xs) = (random((4, 4), 21) * 0.5, random((steps, 4), 22));
        let (value, (g, _)) = models::rnn_grad(&w, &xs);
        let (hand_value, hand) = models::rnn_by_hand(&w, &xs);
        assert_eq!(value, models::rnn(&w, &xs));
        assert!(close(value, hand_value, 1e-12));
        assert!(g.iter().zip(&hand).all(|(a, b)| close(*a, *b, 1e-10)));
    }
}
