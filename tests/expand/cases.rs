// One case per construct family; the README links `mlp_loss`. Cases that
// are the project's own models are read from their source files.

snapshot_of!(mlp_loss, [], "examples/models/mod.rs", "mlp_loss");

snapshot!(constant_matrix_skips_adjoint, [],
    fn f(w: &Array2<f64>, #[constant] x: &Array2<f64>) -> f64 {
        w.dot(x).mapv(f64::tanh).sum()
    }
);

snapshot!(scalar_arithmetic, [],
    fn f(x: f64, y: f64) -> f64 {
        let z = x * y + x.sin();
        z / (1.0 + y * y)
    }
);

snapshot!(shadowing_and_compound_assignment, [],
    fn f(x: f64) -> f64 {
        let y = x.exp();
        let y = y * y;
        let mut z = y;
        z += x;
        z *= 2.0;
        z
    }
);

snapshot!(scalar_methods_as_paths, [],
    fn f(x: f64, y: f64) -> f64 {
        f64::atan2(x, y) + f64::powf(x, 2.5) + x.hypot(y).ln() + f64::max(x, 0.0) + x.mul_add(y, 1.0)
    }
);

snapshot!(broadcasting, [],
    fn f(a: &Array2<f64>, b: &Array1<f64>, s: f64) -> f64 {
        ((a + b) * s - 1.0).sum()
    }
);

snapshot!(reductions_and_views, [],
    fn f(x: &Array2<f64>) -> f64 {
        let m = x.mean_axis(Axis(0)).unwrap();
        let r = x.row(0);
        m.sum() + r.dot(&x.column(1)) + x.slice(s![.., 1..]).mean().unwrap()
    }
);

snapshot!(mapv_closure, [],
    fn f(x: &Array1<f64>, #[constant] k: f64) -> f64 {
        x.mapv(|v| (v * k).max(0.0) + v.powi(2)).sum()
    }
);

// The closure reads `mu`, a function of `x`: `mu`'s cotangent is the
// closure's derivative with respect to it, summed over the elements.
snapshot!(mapv_closure_capturing_an_active_value, [],
    fn f(x: &Array1<f64>) -> f64 {
        let mu = x.mean().unwrap();
        x.mapv(|v| (v - mu).powi(2)).sum()
    }
);

// What a closure computes from the body alone (`w[0]`, `s * s`) is
// computed once, before the `mapv`, and captured as a scalar.
snapshot!(mapv_closure_reading_an_element, [reverse],
    fn f(x: &Array1<f64>, w: &Array1<f64>, s: f64) -> f64 {
        x.mapv(|v| (v * w[0]).sin() + s * s).sum()
    }
);

// A `match` whose arms return or continue: what follows goes into each arm.
snapshot!(exits_in_match_arms, [reverse],
    fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let s = x.sum();
        match k {
            0 => return s * s,
            _ => {}
        }
        let mut acc = s;
        for i in 0..x.len() {
            match i % 2 {
                0 => continue,
                _ => acc = acc * x[i],
            }
            acc += 1.0;
        }
        acc
    }
);

// A guarded arm tests `match s { P if g => true, _ => false }`, then binds
// its pattern in its block.
snapshot!(match_guards, [reverse],
    fn f(x: f64, #[constant] n: usize) -> f64 {
        match n {
            k if k > 2 => x * k as f64,
            _ if x > 0.0 => x.sin(),
            _ => x,
        }
    }
);

// A bare block that may `continue`: what follows it runs if its end was
// reached (`__ad_through_1`), and its `let h` shadows only inside it.
snapshot!(block_that_continues, [reverse],
    fn f(x: f64, v: &Array1<f64>) -> f64 {
        let mut h = x;
        for i in 0..v.len() {
            {
                let h = h * v[i];
                if h > 1.0 {
                    continue;
                }
            }
            h = h * v[i];
        }
        h
    }
);

// A view's tangent is taken as `impl ad::IntoTangent<Array1<f64>>` and made
// the owned array first; a slice's as `&[f64]`.
snapshot!(view_and_slice_tangents, [forward],
    fn f(x: ArrayView1<f64>, w: &[f64]) -> f64 {
        x[0] * w[0] + x.sum()
    }
);

snapshot!(calls_other_functions, [],
    fn f(w: &Array1<f64>, #[constant] x: &Array1<f64>) -> f64 {
        let s = dense(w, x);
        square(s) + 1.0
    }
);

snapshot!(stop_gradient_and_inactive_code, [],
    fn f(x: &Array1<f64>, n: usize) -> f64 {
        let scale = ad::stop_gradient(x.sum());
        let k = (n as f64).sqrt();
        let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        x.mapv(f64::exp).sum() / scale * k + names.len() as f64
    }
);

snapshot!(indexing, [],
    fn f(x: &[f64], m: &Array2<f64>) -> f64 {
        x[0] * x[1] + m[[0, 1]]
    }
);

snapshot!(reverse_only, [reverse],
    fn f(x: f32) -> f32 {
        (x as f64).sqrt() as f32
    }
);

snapshot!(forward_only, [forward],
    fn f(x: &Array1<f64>) -> Array1<f64> {
        x.mapv(f64::sin) * 2.0
    }
);

// `f_jvp` as IR, differentiated again: `f_jvp_vjp` and `f_jvp_jvp` after
// the first-order functions. The kink of `abs` is a branch on `x`.
snapshot!(nested_tangent, [nested],
    fn f(x: f64, y: f64) -> f64 {
        (x * y).sin() + x.abs() / y
    }
);

// A call in nested code: `g_jvp` with the arguments' tangents (a zero, or
// `NoTangent`, bound once for a constant), its pair split into the value
// and the tangent. `f_grad`, as IR, pulls the call back by `g_jvp` too,
// along `x` with the call's adjoint as its tangent.
snapshot!(nested_call, [nested],
    fn f(x: f64) -> f64 {
        g(x, 2.0) * x
    }
);

snapshot!(error_stubs, [],
    fn f(x: f64, w: &mut Array1<f64>) -> f64 {
        x.floor_div(2.0)
    }
);


// The lowered IR: one operation per instruction, constants in braces.

ir_snapshot!(ir_mlp_loss,
    fn mlp_loss(w1: &Array2<f64>, b1: &Array1<f64>, w2: &Array1<f64>,
                #[constant] x: &Array2<f64>, #[constant] y: &Array1<f64>) -> f64 {
        let h = (x.dot(&w1.t()) + b1).mapv(f64::tanh);
        let r = &h.dot(w2) - y;
        r.dot(&r) / y.len() as f64
    }
);

ir_snapshot!(ir_shadowing_and_closure,
    fn f(x: &Array1<f64>, #[constant] k: f64) -> f64 {
        let mut s = x.sum();
        s *= 2.0;
        let s = s + x.mapv(|v| (v * k).max(0.0)).sum();
        s
    }
);

// Control flow: branches record which arm ran, loops keep a tape.

snapshot!(for_loop_with_tape, [],
    fn rnn(w: &Array2<f64>, #[constant] xs: &Array2<f64>) -> f64 {
        let mut h = Array1::<f64>::zeros(w.nrows());
        for t in 0..xs.nrows() {
            h = (w.dot(&h) + &xs.row(t)).mapv(f64::tanh);
        }
        h.sum()
    }
);

snapshot!(branch, [],
    fn f(x: f64, y: f64) -> f64 {
        let mut z = x;
        if x > 0.5 {
            z = z * y;
        } else {
            z = z + 2.0 * y;
        }
        let k = if y > 0.0 { z.sin() } else { z.cos() };
        k * x
    }
);

snapshot!(while_loop, [],
    fn f(x: f64) -> f64 {
        let mut acc = 0.0;
        let mut i = 0;
        while i < 3 {
            acc += x * acc + 1.0;
            i += 1;
        }
        acc
    }
);

snapshot_of!(indexed_loop, [reverse], "examples/models/mod.rs", "rosenbrock");

// A sum whose body holds a loop with a tape and a branch: both run their
// reverse sweeps inside the iteration.
snapshot!(sum_with_an_inner_loop, [reverse],
    fn f(x: &Array1<f64>, w: &Array2<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..w.nrows() {
            let mut h = 0.0;
            for j in 0..x.len() {
                h = (h + w[[i, j]] * x[j]).tanh();
            }
            total += h * x[i % x.len()];
        }
        total
    }
);

snapshot!(nested_loops_with_break_and_continue, [reverse],
    fn f(x: &Array1<f64>, #[constant] limit: f64) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            if i % 2 == 1 {
                continue;
            }
            for j in 0..i {
                acc = acc + x[i] * x[j];
            }
            if acc > limit {
                break;
            }
        }
        acc
    }
);

snapshot!(element_writes_in_a_loop, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = Array1::zeros(x.len());
        for i in 0..x.len() {
            v[i] = x[i] * 2.0;
            v[0] += x[i];
        }
        v.dot(&v)
    }
);

snapshot!(loop_that_saves_nothing, [reverse],
    fn damped(x: f64, n: usize) -> f64 {
        let mut y = x;
        for _ in 0..n {
            y = y * 0.9 + 1.0;
        }
        y
    }
);

ir_snapshot!(ir_loop_with_break,
    fn f(x: &Array1<f64>) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            acc = acc + x[i];
            if acc > 2.0 {
                break;
            }
        }
        acc
    }
);

// Structs: the derive's output, and a function of a struct parameter.

derive_snapshot!(derive_layer,
    pub struct Layer {
        pub w: Array2<f64>,
        pub b: Array1<f64>,
        #[constant]
        pub name: String,
    }
);

// A generic struct: the tangent takes the same parameters, and the impls
// that need more of the fields than `Differentiable` say so per field.
derive_snapshot!(derive_generic_layer,
    pub struct Layer<F: Float> {
        pub w: Array2<F>,
        pub gain: F,
    }
);

// Field reads whatever the field: the tangent struct's field or a zero in
// forward mode (`rules::Field`), an element added into its field in
// reverse mode (`rules::accumulate_element`); `lambda` may be `#[constant]`.
snapshot!(field_and_element_reads, [],
    fn f(p: &Regression) -> f64 {
        let r = p.data.dot(&p.w);
        r.dot(&r) * p.lambda + p.w[0]
    }
);

// Tuples split into one `let` or assignment per name, all elements first.
snapshot!(tuples, [reverse],
    fn f(x: f64, y: f64) -> f64 {
        let (mut a, mut b) = (x * 2.0, y);
        (a, b) = (b, a * b);
        a - b
    }
);

snapshot!(struct_parameter, [reverse],
    fn loss(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for i in 0..m.layers.len() {
            h = (m.layers[i].w.dot(&h) + &m.layers[i].b).mapv(f64::tanh);
        }
        h.sum() * m.scale
    }
);

snapshot_of!(showcase_pooling, [], "examples/json_bags/model.rs", "pooled");

// Fields of a reference parameter passed by reference (`&m.visits`): they
// borrow the caller's data, so `pooled`'s pullback is kept from the forward
// sweep, not recomputed as for a reference to a local.
snapshot_of!(showcase_logit, [reverse], "examples/json_bags/model.rs", "logit");

// A call given a reference to one of the body's own values: the forward
// sweep calls `layer` itself, and the reverse sweep calls `layer_vjp` again
// where `h` is at hand (a pullback kept from the forward sweep would borrow
// `h` past the function's end).
snapshot!(call_with_reference_to_local, [reverse],
    fn f(w: &Array2<f64>, v: &Array2<f64>, #[constant] x: &Array1<f64>) -> f64 {
        let h = layer(w, x);
        layer(v, &h).sum()
    }
);

// Generic over the float type, a search under `stop_gradient`, a fused sum.
snapshot_of!(kmeans_cost, [], "tools/gradbench/src/evals/kmeans.rs", "cost");

// An array read and then written element by element in a loop: the write
// takes the carried array over (the reverse sweep reads only its shape), so
// no iteration copies it.
snapshot!(element_update_in_a_loop, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut y = x.to_owned();
        for i in 1..y.len() {
            let prev = y[i - 1];
            y[i] = y[i] * prev;
        }
        y.sum()
    }
);

// An array written three times per iteration, its elements read between
// the writes, in a branch and by an inner loop: each version's adjoint is a
// value, bound by the pullback of the write that consumed it
// (`valued.rs`); the inner loop adds into the current one.
snapshot!(several_element_writes_in_a_loop, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let n = x.len();
        let mut v = x.mapv(f64::sin);
        for i in 1..n {
            v[i] = v[i] * v[i - 1] + x[i];
            let mut bonus = 0.5;
            if i % 3 == 0 {
                bonus = v[i].cos();
            }
            v[i - 1] += bonus * x[i - 1];
            let mut s = 0.0;
            for j in 0..i {
                s += v[j] * 0.25;
            }
            v[i] -= s.tanh();
        }
        v.sum()
    }
);

// GradBench's `ode` right-hand side, a copy written element by element: the
// reverse loop carries the copy's adjoint as a value.
snapshot_of!(ode_fun, [reverse], "tools/gradbench/src/evals/ode.rs", "ode_fun");

// GradBench's `ode`, four Runge–Kutta stages per step: each stage's
// `y + k * (h / 2.0)` sends its cotangent to `k` in one pass
// (`add_scaled_pullback_rhs`), and the product has no adjoint.
snapshot_of!(ode_runge_kutta, [reverse], "tools/gradbench/src/evals/ode.rs", "ode");

// A scalar field bound by value: the binding owns a copy of the place
// (`rules::to_owned`), which the loop then carries.
snapshot!(scalar_field_carried_by_a_loop, [],
    fn f(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut acc = m.bias;
        for i in 0..x.len() {
            acc = acc * m.bias + x[i];
        }
        acc
    }
);

// An element of a `Vec` of arrays is a place: `&xs[i]` forward, its
// cotangent added into `xs_bar[i]` (sized from `xs[i]` on first use).
snapshot!(vec_of_arrays_element, [],
    fn vec_of_arrays(xs: &Vec<Array1<f64>>, w: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..xs.len() {
            total += xs[i].dot(w).tanh();
        }
        total
    }
);

// A reference to a computed constant as an argument is to a local of its
// own (`c1`), which a pullback keeps: `f_vjp` calls `forward_vjp` again.
snapshot!(reference_to_a_computed_constant, [reverse],
    fn f(w: &Array2<f64>, #[constant] x: &Array1<f64>) -> f64 {
        let again = forward(w, &(x * 0.5));
        again.sum()
    }
);

// A method: compiled as a function of `__ad_self`, its derivatives made
// methods again; `self.scale(x)` calls `Self::scale`.
snapshot!(method_with_self, [reverse],
    fn loss(&self, #[constant] x: &Array1<f64>) -> f64 {
        self.scale(x).sum() * self.gain
    }
);

// `break 'rows` from an inner loop: a flag, a plain `break`, and after the
// inner loop `if __ad_break_rows { break; }`, desugared like any exit.
snapshot!(labelled_break, [reverse],
    fn f(m: &Array2<f64>) -> f64 {
        let mut acc = 0.0;
        'rows: for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                if m[[i, j]] > 1.0 {
                    break 'rows;
                }
                acc += m[[i, j]];
            }
        }
        acc
    }
);

// A `loop` used as a value: `break next` stores `next` in
// `__ad_break_value_1` beside the exit flag, and the loop carries it like
// any variable it assigns; after the loop, `root` is the stored value.
snapshot!(loop_with_a_value, [reverse],
    pub fn fixed_point(x: f64, #[constant] tol: f64) -> f64 {
        let mut y = x;
        let root = loop {
            let next = 0.5 * (y + x / y);
            if (next - y).abs() < tol {
                break next;
            }
            y = next;
        };
        root * x
    }
);

// A `let` of a `match` with a `return` arm: the `let` and what follows
// move into the arm that gives a value, and the `return` is desugared as
// any other (`if c { return e; } rest` is `if c { e } else { rest }`).
snapshot!(return_in_a_let_arm, [reverse],
    fn f(x: f64, #[constant] scale: Option<f64>) -> f64 {
        let s = match scale {
            Some(s) => s,
            None => return x.sin(),
        };
        x * s
    }
);

// A loop over an active `Vec` field's elements is a loop over its indices
// binding `let layer = &m.layers[k];`; `layer.w` is read as `m.layers[k].w`.
snapshot!(loop_over_layers, [reverse],
    fn f(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for layer in &m.layers {
            h = layer.w.dot(&h).mapv(f64::tanh);
        }
        h.sum()
    }
);

// `if let` binds its names again inside the branch (`let mut v = v;`), so
// the branch's record keeps `v` for the reverse sweep.
snapshot!(if_let_binding, [reverse],
    fn f(x: f64, #[constant] opt: Option<f64>) -> f64 {
        let mut y = x;
        if let Some(v) = opt {
            y = y * v;
        }
        y
    }
);

// `mapv(g)` with a function of the user's is `mapv(|v| g(v))`; `clamp` is
// `max(lo).min(hi)`.
snapshot!(mapv_of_a_function_and_clamp, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        x.mapv(softplus).sum() + x.clamp(0.0, 1.0).sum()
    }
);

// A bare block that may `return`, outside any loop: the body of a loop run
// once, whose `return` sets flags like any loop's.
snapshot!(block_that_returns, [reverse],
    fn f(x: f64) -> f64 {
        let mut h = x;
        {
            if h > 1.0 {
                return h.sin();
            }
            h = h * x;
        }
        h
    }
);

// Iterator chains over active values are the loops they stand for: a `zip`
// of a slice and an array is read by index (`&a[k]`, `&b[k]`) into an
// accumulator, whose loop only adds to a scalar and so runs its reverse
// code right after its forward code (an array known to be 1-D is read the
// same way; one that may have more axes is summed as `mapv(..).sum()`).
snapshot!(iterator_chains, [reverse],
    fn f(a: &[f64], b: &Array1<f64>) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        dot + b.iter().map(|v| v.tanh()).sum::<f64>()
    }
);

// ndarray's `var(ddof)` written out as the mean of squared deviations over
// `n - ddof` (in the signature's float type), and ndarray's `map`, whose
// closure takes a reference, as `mapv`.
snapshot!(variance_and_map, [reverse],
    fn f(x: &Array1<f32>) -> f32 {
        x.var(1.0) + x.map(|v| *v * v).sum()
    }
);

// `array![..]` of active scalars: one instruction, whose tangent is the
// items' tangents (a constant's is zero) and whose pullback gives each
// item its element of the cotangent.
snapshot!(array_of_scalars, [],
    fn f(x: f64, y: f64) -> f64 {
        let v = array![x, y * 2.0, 1.5];
        v.dot(&v)
    }
);

// A named view of a local array, read by the pullback: `f_grad` reads it
// where it is; `f_vjp`'s closure owns the array and views it again.
snapshot!(named_view_in_the_pullback, [reverse],
    fn f(x: f64, #[constant] c: &Array1<f64>) -> f64 {
        let m = c.view().insert_axis(Axis(1)).dot(&c.view().insert_axis(Axis(0)));
        let d = m.diag();
        d.mapv(|t| (t * x).sin()).sum()
    }
);

// `max_by(compare).unwrap()`: a reduction whose step keeps the greater of
// the two items, by the comparator called as written.
snapshot!(max_by_comparator, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        x.iter().copied().max_by(|p, q| p.total_cmp(q)).unwrap()
    }
);

// `Zip::from(a).and(b).map_collect(f)`: an array of zeros of `a`'s shape
// whose elements a loop over its indices writes.
snapshot!(zip_map_collect, [reverse],
    fn f(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
        let p = ad::ndarray::Zip::from(a).and(b).map_collect(|&u, &v| u * v.sin());
        p.sum()
    }
);

// `assign` in a loop: the array carried to the next iteration is zeros of
// its shape plus the value (whose pullback sums broadcast axes), after a
// shape read that names the element type.
snapshot!(assign_in_a_loop, [reverse],
    fn f(w: &Array2<f64>, x: &Array1<f64>) -> f64 {
        let mut h = Array1::zeros(x.len());
        for _ in 0..2 {
            let next = (w.dot(&h) + x).mapv(f64::tanh);
            h.assign(&next);
        }
        h.sum()
    }
);

// A row assigned, as the element writes it stands for: the matrix keeps
// each hidden state.
snapshot!(row_assigned, [reverse],
    fn f(w: &Array2<f64>, #[constant] steps: usize) -> f64 {
        let mut states = Array2::zeros((steps, w.nrows()));
        let mut h = Array1::ones(w.nrows());
        for t in 0..steps {
            h = w.dot(&h).mapv(f64::tanh);
            states.row_mut(t).assign(&h);
        }
        states.sum()
    }
);

// A part of an array assigned: `slice_write` replaces it in place (the
// array moves), and its pullback hands the part of the cotangent to the
// value and clears it in the array's.
snapshot!(slice_assigned, [reverse, forward],
    fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut y = Array1::zeros(2 * k);
        y.slice_mut(s![..k]).assign(&x.slice(s![k..]));
        y.slice_mut(s![k..]).assign(&x.mapv(f64::exp).slice(s![..k]));
        y.dot(&y)
    }
);

// Elements written in place: `for o in y.iter_mut()` and
// `Zip::from(&mut y).and(x).for_each(..)` are loops over `y`'s indices
// whose `*o` is the element write `y[index] = ..`.
snapshot!(written_in_place, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut y = x.mapv(f64::exp);
        for o in y.iter_mut() {
            *o = o.tanh();
        }
        Zip::from(&mut y).and(x).for_each(|o, &v| *o += v * v);
        y.sum()
    }
);

// A stack of states: `pop().unwrap()` reads the last item (an owned copy),
// then `popped` moves the list on without it; `pop_pullback` gives the
// list's adjoint back a zero last slot for the item's cotangent.
snapshot!(stack_of_states, [reverse],
    fn f(w: &Array2<f64>, #[constant] leaves: &Array2<f64>, #[constant] reduce: &Vec<bool>) -> f64 {
        let mut stack: Vec<Array1<f64>> = Vec::new();
        let mut next = 0;
        for &r in reduce {
            if r {
                let right = stack.pop().unwrap();
                let left = stack.pop().unwrap();
                stack.push(w.dot(&(left + right)).mapv(f64::tanh));
            } else {
                stack.push(leaves.row(next).to_owned());
                next += 1;
            }
        }
        stack.pop().unwrap().sum()
    }
);

// `map_axis(Axis(1), f)` is a chain over the rows, collected;
// `Array1::from(vec![x; n])` is `from_elem`, whose pullback sums.
snapshot!(map_axis_and_repeated, [reverse],
    fn f(m: &Array2<f64>, x: f64) -> f64 {
        let norms = m.map_axis(Axis(1), |r| r.dot(&r).sqrt());
        let repeated = Array1::from(vec![x; 3]);
        norms.sum() * repeated.sum()
    }
);

// A matrix by rows: each row a 1-D array (`stack`), the rows stacked along
// a new axis (`stack_along`); `sin_cos` is its operand bound once, then its
// sine and cosine.
snapshot!(array_of_rows, [reverse],
    fn f(angle: f64, p: &Array1<f64>) -> f64 {
        let (s, c) = angle.sin_cos();
        let r = array![[c, -s], [s, c]];
        r.dot(p).sum()
    }
);

// `from_shape_fn` with an active body: an array of zeros whose elements a
// loop writes (element writes then make it active).
snapshot!(from_shape_fn, [reverse],
    fn f(x: &Array1<f64>, s: f64) -> f64 {
        Array1::from_shape_fn(x.len(), |i| x[i] * s).sum()
    }
);

// A closure bound to a local and called on active values: each call is its
// body inlined (`let z = ..;` then the body), and the closure, which reads
// the active `w`, is not emitted.
snapshot!(local_closure, [reverse],
    fn f(x: f64, w: f64) -> f64 {
        let scaled = |z: f64| (z * w).tanh();
        scaled(x) + scaled(2.0)
    }
);

// A loop over an active matrix's rows reads `m.row(k)` at each index (over
// a constant matrix's, it runs as written).
snapshot!(rows_of_a_matrix, [reverse],
    fn f(w: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let mut total = 0.0;
        for row in m.rows() {
            total += row.dot(w).tanh();
        }
        total
    }
);

// A `filter` guards the rest of the loop body in an `if`, and as the sum
// only adds in one arm the loop is still fused; a `fold` assigns its
// accumulator from the closure's body, whose parameters are bound to the
// accumulator and the item.
snapshot!(filter_and_fold, [reverse],
    fn f(x: &[f64]) -> f64 {
        let logs: f64 = x.iter().filter(|v| **v > 0.0).map(|v| v.ln()).sum();
        logs + x.iter().fold(1.0, |acc, v| acc * 0.5 + v)
    }
);

// `skip` and `rev` change the position an element is read at; a window
// the body only indexes is read from the array (`w[1]` is `x[k + 1]`).
snapshot!(positions_and_windows, [reverse],
    fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let tail: f64 = x.iter().rev().skip(k).map(|v| v * v).sum();
        let mut rough = 0.0;
        for w in x.windows(2) {
            rough += (w[1] - w[0]).powi(2);
        }
        tail + rough
    }
);

// `chain` reads an item from one source or the other by its position:
// `x`'s length is bound once, and the constant side's items are constants
// of the branch, which its record leaves out.
snapshot!(chained_sources, [reverse],
    fn f(x: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut h = 0.0;
        for v in x.iter().chain(c.iter()) {
            h = (h * v).sin();
        }
        h
    }
);

// `take_while` guards the body as a filter would, and where its condition
// fails sets a flag that the loop checks after the iteration, with the
// exit flag of the body's own `break`; `skip_while` skips items while a
// flag holds, which the first item that passes clears.
snapshot!(taken_while, [reverse],
    fn f(x: &Array1<f64>, #[constant] limit: f64) -> f64 {
        let mut g = 0.0;
        for v in x.iter().take_while(|v| **v > -limit) {
            if g > 1.0 {
                break;
            }
            g += v.exp();
        }
        let tail: f64 = x.iter().skip_while(|v| **v < limit).sum();
        g * tail
    }
);

// `sort_by` finds the order on the values, inactive, then reads the items
// in it; `truncate` pops while the list is longer; `insert` pops the
// items after the place into a list of their own and pushes them back, as
// `remove` does around its pop; `reverse` reads the items from the last.
snapshot!(sorted_and_truncated, [reverse],
    fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        v.truncate(k);
        v.insert(0, x[0] * 2.0);
        v.reverse();
        let last = v.remove(0);
        v.iter().sum::<f64>() * last
    }
);

// A `fold` from a tuple keeps one accumulator per item, which the loop
// carries as names.
snapshot!(tuple_fold, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
        q - s * s
    }
);

// A `scan`'s state is declared before the loop, and its closure's `*acc`
// reads and assigns it.
snapshot!(running_sum_by_scan, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        x.iter().scan(0.0, |acc, &v| { *acc += v; Some(*acc) }).map(|s| s.sin()).sum::<f64>()
    }
);

// `swap` and `retain` read the items from positions found on the values
// (inactive); `split_off` copies the tail out and truncates; a clone of a
// `Vec` names the same value, copied where a push would consume it.
snapshot!(swapped_retained_and_split, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = x.to_vec();
        v.swap(0, 1);
        let mut kept = v.clone();
        kept.retain(|a| *a > 0.0);
        kept.push(x[0]);
        let tail = v.split_off(1);
        v[0] * tail[0] + kept.iter().sum::<f64>()
    }
);

// `swap_remove` and the rotations gather the list's items in their new
// order, so the reverse sweep scatters each cotangent back to its place.
snapshot!(swap_removed_and_rotated, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = x.to_vec();
        let h = v.swap_remove(0);
        v.rotate_left(1);
        h * v[0]
    }
);

// A read with a default at the boundary: the element where the index is
// in bounds, else the default, in an `if` on the index.
snapshot!(read_or_default, [reverse],
    fn f(x: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            s += x[i] * x.get(i + 1).copied().unwrap_or(0.0);
        }
        s
    }
);

// `flat_map` before a sum: a loop over the outer items, each adding its
// inner chain's sum.
snapshot!(flat_mapped, [reverse],
    fn f(xs: &[Array1<f64>]) -> f64 {
        xs.iter().flat_map(|x| x.iter()).map(|v| v * v).sum::<f64>()
    }
);

// A drain of part of a list: the bounds bound first, the items read as
// a sub-slice's, then the rest gathered after the statement.
snapshot!(partly_drained, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut q = x.to_vec();
        let pair: f64 = q.drain(..2).map(|a| a * a).sum();
        pair * q[0]
    }
);

// A bag of `Vec`s of floats: each item reads as a 1-D array (`view` of a
// `Vec`), and its cotangent is added into the item's `Vec` adjoint.
snapshot!(bag_of_vecs, [reverse],
    fn f(w: &Array1<f64>, xs: &[Vec<f64>]) -> f64 {
        let mut total = 0.0;
        for inst in xs {
            total += inst.iter().map(|v| v * v).sum::<f64>() * inst[0] * w[0];
        }
        total
    }
);

// `resize` truncates, then pushes clones of the value; `append` is
// `extend(other.drain(..))`, a loop of pushes that then empties `other`.
snapshot!(resized_and_appended, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = vec![x[0]];
        v.resize(3, x[1]);
        let mut w = vec![x[1] * x[0]];
        v.append(&mut w);
        v[2] * v[3]
    }
);

// A chunk the body sums is a sum over its positions in the array, so
// its reverse code adds into single elements instead of building the
// chunk's cotangent.
snapshot!(summed_chunks, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        x.exact_chunks(2).into_iter().map(|c| c.sum().tanh()).sum::<f64>()
    }
);

// A lone `map` over a 1-D array parameter is collected as `mapv`; other
// chains' `collect()` fills an array of zeros element by element, as
// `from_shape_fn` does.
snapshot!(collected_chain, [reverse],
    fn f(x: &Array1<f64>, w: &[f64]) -> f64 {
        let y: Array1<f64> = x.iter().map(|v| v.exp()).collect();
        let z: Array1<f64> = x.iter().zip(w).map(|(a, b)| a * b).collect();
        y.dot(&z)
    }
);

// `reduce(f).unwrap()`: the accumulator takes the first item, which a flag
// marks; `unwrap`'s panic is an assertion on the flag.
snapshot!(reduce_from_first_item, [reverse],
    fn f(x: &[f64]) -> f64 {
        x.iter().cloned().reduce(f64::max).unwrap()
    }
);

// `concatenate` of an active and a constant part: the tangent joins a zero
// tangent for the constant; the active part's cotangent is its run of the
// result's, placed by the parts' lengths.
snapshot!(concatenated, [],
    fn f(x: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let z = concatenate(Axis(0), &[x.view(), c.view()]).unwrap();
        z.mapv(f64::tanh).sum()
    }
);

// ndarray's in-place updates are assignments (`h = h.mapv(..)`,
// `h = h + &x * a`); a diagonal is a view whose cotangent is scattered onto
// the matrix's diagonal; a sub-slice's chain reads the slice after its
// bounds check.
snapshot!(in_place_diagonal_and_sub_slice, [reverse],
    fn f(m: &Array2<f64>, x: &Array1<f64>, y: &[f64], a: f64) -> f64 {
        let mut h = m.dot(x);
        h.mapv_inplace(f64::tanh);
        h.scaled_add(a, x);
        h.sum() + m.diag().sum() + y[1..].iter().sum::<f64>()
    }
);

// A closure that reads an active value is not emitted, so its call in a
// condition is its body there too; a constant viewing a local array
// (`m.diag()`) is an owned copy, which the branch's record may keep, and so
// is a named one (`r`) in the record.
snapshot!(hidden_closure_and_view_of_a_local, [reverse],
    fn f(x: f64, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let g = |p: f64| (p * x).tanh();
        if k == 0 {
            return x;
        }
        let m = c.view().insert_axis(Axis(1)).dot(&c.view().insert_axis(Axis(0)));
        let r = m.row(0);
        let s = m.diag().mapv(|t| t * x).sum() + r.mapv(|t| t * x).sum();
        if g(c[0]) > 0.0 { s * 2.0 } else { s }
    }
);

// Hidden states pushed onto a `Vec`, then read by a loop over it: the
// push moves the state in (its shape stays for the pullback), and the
// reverse sweep pops each item's cotangent off the list's adjoint.
snapshot!(hidden_states_pushed, [reverse],
    fn f(w: &Array2<f64>, v: &Array1<f64>, #[constant] steps: usize) -> f64 {
        let mut hs = Vec::new();
        let mut h = Array1::ones(w.nrows());
        for _ in 0..steps {
            h = w.dot(&h).mapv(f64::tanh);
            hs.push(h.clone());
        }
        let mut loss = 0.0;
        for h in &hs {
            loss += h.dot(v);
        }
        loss
    }
);

// A `Vec` of floats written by element, then made an array.
snapshot!(vec_written_then_array, [forward, reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = vec![0.0; x.len()];
        for i in 0..x.len() {
            v[i] = x[i].exp();
        }
        Array1::from(v).dot(x)
    }
);

// A loop that reads the list it pushes onto: the item read is an owned
// copy saved on the tape, so the list moves on at each push instead of
// being kept whole for every iteration.
snapshot!(list_read_while_pushing, [reverse],
    fn f(w: &Array2<f64>, h0: &Array1<f64>) -> f64 {
        let mut hs = vec![h0.to_owned()];
        for t in 0..3 {
            let next = w.dot(&hs[t]).mapv(f64::tanh);
            hs.push(next);
        }
        hs[3].sum()
    }
);

// A chain collected into a `Vec` is a `Vec::new()` pushed item by item
// (so a `filter` may drop some); `first().unwrap()` and `last().unwrap()`
// are its items at 0 and at `len() - 1`.
snapshot!(chain_collected_into_a_vec, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let kept: Vec<f64> = x.iter().filter(|v| **v > 0.0).map(|v| v.exp()).collect();
        kept.first().unwrap() * kept.last().unwrap()
    }
);

// `let y;` initialised by an active value in each branch: each branch's
// value gets a name of its own (`y_1`, `y_2`, joined in `y_3`), and the
// declaration, which nothing reads any more, is left out.
snapshot!(declared_then_assigned, [reverse],
    fn f(x: f64, #[constant] n: usize) -> f64 {
        let y;
        if n > 2 {
            y = x * x;
        } else {
            y = x.sin();
        }
        y + 1.0
    }
);

// A closure that reads a struct's field in a branch: the read moves out of
// the closure, to before the `mapv`, which captures the field's value
// (`t1`) rather than the struct.
snapshot!(closure_reads_a_field_in_a_branch, [reverse],
    fn leaky(p: &Params, #[constant] x: &Array1<f64>) -> f64 {
        x.mapv(|v| if v > 0.0 { v } else { p.slope * v }).sum()
    }
);

// A `for` loop over a chain with stages: the loop runs over the source's
// indices, the map's closure is applied to each item, and the filter's
// condition guards the body. The map's parameter `v` shadows a name the
// body reads, so its binding stays in a block of its own, which assigns
// the mapped item to `mapped2`.
snapshot!(for_over_a_filtered_map, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let v = 2.0;
        let mut s = 0.0;
        for a in x.iter().filter(|t| **t > 0.5).map(|v| v.exp()) {
            s += a * v;
        }
        s
    }
);

// A function that returns a tuple, and a caller that destructures it: the
// tuple is one value (`t4`), its pullback takes a tuple of cotangents, and
// the caller reads its items by position (`&t1.0`), their adjoints adding
// into the parts of a whole tuple adjoint (`t1_bar.0`).
snapshot!(tuple_returned_and_destructured, [reverse],
    fn mean_and_square(x: &Array1<f64>) -> (f64, f64) {
        let m = x.mean().unwrap();
        (m, m * m)
    }
);

snapshot!(tuple_destructured_by_a_caller, [reverse],
    fn caller(x: &Array1<f64>) -> f64 {
        let (m, s) = mean_and_square(x);
        m * s
    }
);

// A gradient read in differentiable code: items of items by a nested
// pattern (`.1 .0`), pulled back through the callee's `_grad_vjp`.
snapshot!(gradient_destructured_by_a_caller, [reverse],
    fn caller(x: f64, y: f64) -> f64 {
        let (v, (gx, gy)) = f_grad(x, y);
        v * gx + gy
    }
);

// A `#[constant]` parameter's gradient entry is `ad::NoTangent` (here a
// unit pattern), which no later statement reads: not copied out of the
// gradient, so the rules never see it.
snapshot!(constant_gradient_entry_unread, [reverse],
    fn caller(x: f64, #[constant] q: f64) -> f64 {
        let (v, (gx, NoTangent)) = f_grad(x, q);
        v * gx
    }
);

// `f_grad` as IR with a `#[constant]` parameter: its entry is `NoTangent`,
// taken as it is by the value and by the tangent of the result.
snapshot!(nested_gradient_with_a_constant, [nested],
    fn f(x: f64, #[constant] q: f64) -> f64 {
        q * x.sin()
    }
);

// `f_grad` as IR through an `if`: the condition bound to a name, the
// branch's values the adjoints read carried out by phis (zero from the
// other branch), and a second `if` on the same name pulling each branch
// back, its phis merging the adjoints of `x` and `y`.
snapshot!(nested_gradient_through_a_branch, [nested],
    fn f(x: f64, y: f64) -> f64 {
        let t = if x > y { x.sin() * y } else { y };
        t * x
    }
);

// `f_grad` as IR through a loop: the loop records each iteration's
// inactive values (`i`, `c1`) and tapes the values the adjoints read
// (`acc`, `q`); a second loop over the iterations in reverse reads them
// back and carries the adjoints of `acc` and of `y`.
snapshot!(nested_gradient_through_a_loop, [nested],
    fn f(x: f64, y: f64, #[constant] n: usize) -> f64 {
        let mut acc = x;
        for i in 0..n {
            let q = acc.sin();
            acc = acc * q + y * (i as f64);
        }
        acc * y
    }
);

// `f_grad` as IR through a loop inside a loop: one record and one tape
// for every run of the inner loop; the outer loop carries the tape and
// records where each run starts and ends (`start_2`, `end_2`), and its
// reverse loop runs the inner one's reverse loop over that stretch.
snapshot!(nested_gradient_through_nested_loops, [nested],
    fn f(x: f64, #[constant] n: usize) -> f64 {
        let mut s = x;
        for i in 0..n {
            for j in 0..i {
                s = s * x + j as f64;
            }
        }
        s
    }
);

// `f_grad` as IR through a loop after an early `return`, so inside a
// branch: its record and tape are declared at the top, the branch carries
// the tape out (an empty one from the branch that returns), and the
// second `if` runs the reverse loop in the branch that ran the loop.
snapshot!(nested_gradient_through_a_loop_in_a_branch, [nested],
    fn f(x: f64, #[constant] n: usize) -> f64 {
        if n == 0 {
            return x;
        }
        let mut s = x;
        for _ in 0..n {
            s = (s * x).sin();
        }
        s
    }
);

// `to_vec` and `extend` on a `Vec` local: the items collected by a loop of
// pushes, then more pushed by another.
snapshot!(vec_from_to_vec_and_extend, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut v = x.to_vec();
        v.extend(x.iter().map(|a| a.sin()));
        v.iter().sum::<f64>()
    }
);

// A chain over a matrix the body makes: its elements read in logical
// order through `unravel(t.dim(), k)`, whatever its number of axes.
snapshot!(chain_over_a_local_matrix, [reverse],
    fn f(x: &Array2<f64>, w: &Array2<f64>) -> f64 {
        let logits = x.dot(w);
        logits.iter().fold(0.0, |a, &b| a + b * b)
    }
);

// `(h, c) = cell(&h, &c, x)` in a loop: the tuple bound once per
// iteration, each name assigned a copy of its item, and the loop carries
// the names.
snapshot!(pair_assigned_in_a_loop, [reverse],
    fn f(h0: &Array1<f64>, #[constant] xs: &[f64]) -> f64 {
        let mut h = h0.to_owned();
        let mut c = h0.to_owned();
        for &x in xs {
            (h, c) = cell(&h, &c, x);
        }
        h.sum() * c.sum()
    }
);

// Recursion over a constant tree: reverse mode boxes the pullback of each
// call of itself for the function's lifetime, which bounds its others;
// forward mode passes the tree's place a `NoTangent` (its type has no
// tangent, and the parameter is `#[constant]`).
snapshot!(recursion_over_a_tree, [],
    fn tree_value(x: &Array1<f64>, a: f64, #[constant] t: &Tree) -> f64 {
        match t {
            Tree::Leaf(i) => x[*i],
            Tree::Node(l, r) => (a * tree_value(x, a, l) + tree_value(x, a, r)).tanh(),
        }
    }
);

// A loop over an inactive array the body makes: its record keeps owned
// copies of the items, as it outlives the array.
snapshot!(items_of_a_local_array, [reverse],
    fn f(a: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let table = c.mapv(|t| t * t - t);
        let mut s = 0.0;
        for v in table.iter() {
            s = (s + v * a[0]).sin();
        }
        s
    }
);

// `while let` over a stack of a tree's nodes: the loop `loop { let
// Some(node) = stack.pop() else { break }; .. }`, whose `let ... else`
// becomes a `match` holding the rest of the body, and its `break` a flag.
snapshot!(while_let_over_a_stack, [reverse],
    fn f(w: &Array1<f64>, #[constant] t: &Tree) -> f64 {
        let mut stack = vec![t];
        let mut s = 0.0;
        while let Some(node) = stack.pop() {
            match node {
                Tree::Leaf(i) => s = (s + w[*i]).sin(),
                Tree::Node(l, r) => {
                    stack.push(l);
                    stack.push(r);
                }
            }
        }
        s
    }
);

// A labelled block used as a value: the labelled loop that runs once,
// whose `break 'found v` and last expression give its value.
snapshot!(labelled_block_value, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let found = 'found: {
            for i in 0..x.len() {
                if x[i] > 0.5 {
                    break 'found x[i] * 2.0;
                }
            }
            x.sum()
        };
        found * x[0]
    }
);

// A tuple local a loop assigns, whole and by item: split into one local
// per item before lowering, which the loop carries like any names.
snapshot!(tuple_carried_by_a_loop, [reverse],
    fn f(x: &Array1<f64>) -> f64 {
        let mut acc = (0.0, 1.0);
        for i in 0..x.len() {
            acc = (acc.0 + x[i], acc.1 * x[i]);
            acc.1 += 0.5;
        }
        acc.0 * acc.1
    }
);

// A fixed-size array of active values: the 1-D array of its items, read
// by index and by a chain like any array.
snapshot!(fixed_size_array, [reverse],
    fn f(x: &Array1<f64>, s: f64) -> f64 {
        let c = [x[0].exp(), x[1] * s, 2.0];
        c.iter().sum::<f64>() * c[1]
    }
);

// A method calling itself (`self.value(l)` is `Self::value(self, l)`),
// whose leaves read an element of a field as a `match` arm's value: the
// element is copied out of its place, and the branch's record keeps its
// index for the reverse sweep. Its calls pass `self` on unchanged, so
// their pullbacks add into the caller's adjoint of `self` through a
// hidden sibling method, `value_accumulating` (an inner function could
// not name `Self`).
snapshot!(recursive_method_over_a_tree, [reverse],
    fn value(&self, #[constant] t: &Tree) -> f64 {
        match t {
            Tree::Leaf(i) => self.features[*i],
            Tree::Node(l, r) => (self.mix * self.value(l) + self.value(r)).tanh(),
        }
    }
);

// A method of a struct of the user's on a field, an element of a `Vec`
// field and a parameter: called by method syntax, `(&r).forward_vjp(x)`
// and `(&r).forward_jvp(x, &r_dot, x_dot)`, as the receiver's type is not
// known to the macro; the receiver's gradient adds into its place.
// A recursive function of a struct parameter (tests/documents.rs): the
// adjoint of `p` is a whole struct, moved into each call's `Option` and
// back out, so every node adds into one gradient.
snapshot_of!(recursion_over_a_document, [reverse], "tests/documents.rs", "embed");

snapshot!(method_of_a_field, [reverse, forward],
    fn score(&self, #[constant] x: &Array1<f64>) -> f64 {
        let h = self.encoder.forward(x);
        self.layers[0].forward(&h).sum()
    }
);

// Forms rewritten before lowering: `std::iter::zip(a, b)` is
// `a.into_iter().zip(b)`, `x.last().unwrap()` is `x[x.len() - 1]`, an array
// pattern binds like a tuple's, `vec![v; n]` collects `n` copies of `v`
// (bound once), `Array1::from_iter(chain)` collects the chain, and
// `from_shape_vec` reshapes `Array1::from(list)`.
snapshot!(rewritten_forms, [reverse],
    fn f(x: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let dot: f64 = std::iter::zip(x, c).map(|(a, b)| a * b).sum();
        let [first, last] = [*x.first().unwrap(), *x.last().unwrap()];
        let copies = vec![first * 2.0; 2];
        let tanhs = Array1::from_iter(x.iter().map(|v| v.tanh()));
        let m = Array2::from_shape_vec((1, 2), copies).unwrap();
        dot + last * m.sum() + tanhs.sum()
    }
);

// A tuple a call makes, carried by a loop and read by item: each value is
// bound once and the items read are taken (`__ad_t_0`, `__ad_t_1`).
snapshot!(call_tuple_carried_by_a_loop, [reverse],
    fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut t = stats(x);
        for _ in 0..k {
            t = stats(&(x * t.0));
        }
        t.1
    }
);

snapshot!(option_local_split, [],
    fn f(x: &[f64]) -> f64 {
        let mut prev: Option<f64> = None;
        let mut s = 0.0;
        for &v in x {
            if let Some(p) = prev {
                s += (v - p).powi(2);
            }
            prev = Some(v);
        }
        s
    }
);

snapshot!(option_field, [],
    fn f(l: &Layer, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = l.w.dot(x);
        if let Some(b) = &l.bias {
            h = h + b;
        }
        h.mapv(f64::tanh).sum()
    }
);
