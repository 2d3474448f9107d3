//! The showcase: a multi-instance classifier trained by gradient descent on
//! bags of 1 to 50 instances. Every sample has a different size; the one
//! compiled gradient `bag_loss_grad` serves them all, with no padding,
//! preparation or cache.
//!
//! Run with `cargo run --release --example fit_bags`.

mod models;

use ad::check::{central_differences, Flat, Rng};
use ad::ndarray::{Array1, Array2};
use models::{bag_logit, bag_loss, bag_loss_grad};

const DIM: usize = 8;
const HIDDEN: usize = 16;

/// A bag of instances around a centre that depends on the label: positive
/// bags lean along one direction, negative bags along another, with noise
/// that makes small bags harder.
fn make_bag(rng: &mut Rng, label: f64) -> Array2<f64> {
    let n = 1 + rng.below(50);
    let direction = if label > 0.5 { 0.6 } else { -0.6 };
    Array2::from_shape_fn((n, DIM), |(_, j)| {
        let centre = if j < 2 { direction } else { 0.0 };
        centre + 1.5 * rng.uniform()
    })
}

struct Params {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    b2: f64,
}

fn main() {
    let mut rng = Rng::new(2024);
    let data: Vec<(Array2<f64>, f64)> = (0..400)
        .map(|i| {
            let label = (i % 2) as f64;
            (make_bag(&mut rng, label), label)
        })
        .collect();
    let (train, test) = data.split_at(300);
    let sizes: Vec<usize> = train.iter().map(|(b, _)| b.nrows()).collect();
    println!(
        "{} training bags, {} test bags, {} to {} instances each",
        train.len(),
        test.len(),
        sizes.iter().min().unwrap(),
        sizes.iter().max().unwrap()
    );

    let mut p = Params {
        w1: Array2::from_shape_simple_fn((DIM, HIDDEN), || 0.5 * rng.uniform()),
        b1: Array1::from_elem(HIDDEN, 0.1),
        w2: Array1::from_shape_simple_fn(HIDDEN, || 0.5 * rng.uniform()),
        b2: 0.0,
    };

    check_one_gradient(&p, &train[0]);

    let rate = 0.5;
    for epoch in 0..=60 {
        let mut loss = 0.0;
        let mut g = (
            Array2::zeros(p.w1.raw_dim()),
            Array1::zeros(HIDDEN),
            Array1::zeros(HIDDEN),
            0.0,
        );
        for (bag, label) in train {
            let (l, (gw1, gb1, gw2, gb2, _, _)) =
                bag_loss_grad(&p.w1, &p.b1, &p.w2, p.b2, bag, *label);
            loss += l;
            g.0 += &gw1;
            g.1 += &gb1;
            g.2 += &gw2;
            g.3 += gb2;
        }
        let n = train.len() as f64;
        p.w1.scaled_add(-rate / n, &g.0);
        p.b1.scaled_add(-rate / n, &g.1);
        p.w2.scaled_add(-rate / n, &g.2);
        p.b2 -= rate / n * g.3;
        if epoch % 10 == 0 {
            println!(
                "epoch {epoch:3}  loss {:.4}  train accuracy {:.3}  test accuracy {:.3}",
                loss / n,
                accuracy(&p, train),
                accuracy(&p, test)
            );
        }
    }
}

/// One gradient of the generated code against central differences.
fn check_one_gradient(p: &Params, (bag, label): &(Array2<f64>, f64)) {
    let (_, (gw1, _, _, gb2, _, _)) = bag_loss_grad(&p.w1, &p.b1, &p.w2, p.b2, bag, *label);
    let fd_w1 = central_differences(
        |w1: &Array2<f64>| bag_loss(w1, &p.b1, &p.w2, p.b2, bag, *label),
        &p.w1,
        1e-6,
    );
    let fd_b2 = central_differences(
        |b2: &f64| bag_loss(&p.w1, &p.b1, &p.w2, *b2, bag, *label),
        &p.b2,
        1e-6,
    );
    let worst = gw1
        .to_flat()
        .iter()
        .zip(&fd_w1)
        .map(|(g, f)| (g - f).abs())
        .fold(0.0, f64::max);
    println!(
        "gradient check on a bag of {} instances: d loss / d b2 = {:.8} (finite differences {:.8}); \
         largest difference over the {} entries of d loss / d w1: {:.1e}",
        bag.nrows(),
        gb2,
        fd_b2[0],
        fd_w1.len(),
        worst
    );
}

fn accuracy(p: &Params, data: &[(Array2<f64>, f64)]) -> f64 {
    let right = data
        .iter()
        .filter(|(bag, label)| (bag_logit(&p.w1, &p.b1, &p.w2, p.b2, bag) > 0.0) == (*label > 0.5))
        .count();
    right as f64 / data.len() as f64
}
