//! Jobs that describe themselves, so that another instance of the program can run them.
//!
//! The web page has one thread: work run on it pauses the page. There, a [`RemoteJob`] is
//! handed to a Web Worker (a second instance of the same wasm module, with memory of its own;
//! see `web_worker`), which runs it by name and answers with its output. Both cross as a
//! [`Parcel`]: the small fields in postcard's encoding, and every large array of floats
//! beside them as one block (a transfer between the page and the worker, never a copy element
//! by element through the encoder). Fields that hold such arrays say so with
//! `#[serde(with = "crate::jobs::remote::bulk")]`.
//!
//! On the desktop a remote job runs on a worker thread like any other, without being encoded;
//! the registry's tests encode every job and its output, so that the web's path is tested here.

use std::cell::RefCell;
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Cancel, Cancelled};

/// A job that can run in another instance of the program: its fields are all it needs.
pub trait RemoteJob: Serialize + DeserializeOwned + Send + 'static {
    /// The job's name in the registry a worker runs jobs by; unique among jobs.
    const NAME: &'static str;
    type Output: Serialize + DeserializeOwned + Send + 'static;

    fn run(self, progress: &Progress<Self::Output>) -> Result<Self::Output, Cancelled>;
}

/// What a running job has, wherever it runs: whether its result is still wanted, and where
/// its progress and its coarse results (previews, shown until the exact one arrives) go.
pub struct Progress<'a, T> {
    cancel: &'a Cancel,
    report: &'a dyn Fn(f32),
    preview: &'a dyn Fn(T),
}

impl<'a, T> Progress<'a, T> {
    pub fn new(cancel: &'a Cancel, report: &'a dyn Fn(f32), preview: &'a dyn Fn(T)) -> Self {
        Self {
            cancel,
            report,
            preview,
        }
    }

    pub fn cancel(&self) -> &Cancel {
        self.cancel
    }

    /// How far the job has come, from 0 to 1.
    pub fn report(&self, fraction: f32) {
        (self.report)(fraction);
    }

    /// A coarse result, shown until the exact one arrives.
    pub fn preview(&self, value: T) {
        (self.preview)(value);
    }
}

/// A job's progress with its previews as parcels: what a registry's entry runs with.
pub type ParcelProgress<'a> = Progress<'a, Parcel>;

/// A value as it crosses between instances: `header` is its encoding with each bulk array
/// replaced by its index in `arrays`.
pub struct Parcel {
    pub header: Vec<u8>,
    pub arrays: Vec<Bulk>,
}

/// One bulk array's values, in row-major order: shared with the value encoded where it could
/// be (an `Arc`'d table in standard layout), else copied.
pub enum Bulk {
    Owned(Vec<f64>),
    Shared(Arc<ArrayD<f64>>),
}

impl Bulk {
    pub fn as_slice(&self) -> &[f64] {
        match self {
            Bulk::Owned(values) => values,
            // Only tables in standard layout are shared (see `BulkArray for Arc<ArrayD>`).
            Bulk::Shared(table) => table.as_slice().unwrap_or(&[]),
        }
    }

    fn into_vec(self) -> Vec<f64> {
        match self {
            Bulk::Owned(values) => values,
            Bulk::Shared(table) => table.as_slice().unwrap_or(&[]).to_vec(),
        }
    }
}

thread_local! {
    /// The bulk arrays of the value being encoded on this thread, in the order met.
    static OUTGOING: RefCell<Option<Vec<Bulk>>> = const { RefCell::new(None) };
    /// The bulk arrays of the value being decoded on this thread, each taken once.
    static INCOMING: RefCell<Option<Vec<Option<Vec<f64>>>>> = const { RefCell::new(None) };
}

/// `value` as a parcel.
pub fn encode<T: Serialize>(value: &T) -> Result<Parcel, String> {
    OUTGOING.set(Some(Vec::new()));
    let header = postcard::to_allocvec(value);
    let arrays = OUTGOING.take().unwrap_or_default();
    match header {
        Ok(header) => Ok(Parcel { header, arrays }),
        Err(error) => Err(format!("a job could not be encoded: {error}")),
    }
}

/// The value `parcel` holds.
pub fn decode<T: DeserializeOwned>(parcel: Parcel) -> Result<T, String> {
    INCOMING.set(Some(
        parcel
            .arrays
            .into_iter()
            .map(|bulk| Some(bulk.into_vec()))
            .collect(),
    ));
    let value = postcard::from_bytes(&parcel.header);
    INCOMING.set(None);
    value.map_err(|error| format!("a job's parcel could not be read: {error}"))
}

/// A registered job: what a worker runs when handed a parcel by its name.
#[derive(Clone, Copy)]
pub struct RemoteEntry {
    pub name: &'static str,
    run: RunParcel,
}

/// A registered job's runner: its output's parcel, why the parcel was not the job's, or that
/// it was cancelled.
type RunParcel = fn(Parcel, &ParcelProgress) -> Result<Result<Parcel, String>, Cancelled>;

impl RemoteEntry {
    pub const fn of<J: RemoteJob>() -> Self {
        Self {
            name: J::NAME,
            run: run_parcel::<J>,
        }
    }

    /// Decodes the job, runs it and encodes its output; `Err` inside for a parcel that is
    /// not this job's.
    pub fn run(
        &self,
        parcel: Parcel,
        progress: &ParcelProgress,
    ) -> Result<Result<Parcel, String>, Cancelled> {
        (self.run)(parcel, progress)
    }
}

fn run_parcel<J: RemoteJob>(
    parcel: Parcel,
    progress: &ParcelProgress,
) -> Result<Result<Parcel, String>, Cancelled> {
    let job: J = match decode(parcel) {
        Ok(job) => job,
        Err(error) => return Ok(Err(format!("{}: {error}", J::NAME))),
    };
    // A preview that cannot be encoded is left out: the exact result still comes.
    let preview = |value: J::Output| {
        if let Ok(parcel) = encode(&value) {
            progress.preview(parcel);
        }
    };
    let output = job.run(&Progress::new(progress.cancel, progress.report, &preview))?;
    Ok(encode(&output))
}

/// The entry named `name`.
pub fn find<'a>(registry: &'a [RemoteEntry], name: &str) -> Option<&'a RemoteEntry> {
    registry.iter().find(|entry| entry.name == name)
}

/// Whether the job `make` makes gives the same output run here and run as a worker runs it
/// (encoded, run from its parcel, its output decoded): the two outputs' encodings, bit for
/// bit. For each job's tests, so that the web's path is tested where there is no browser.
pub fn same_through_parcels<J: RemoteJob>(make: impl Fn() -> J) -> Result<(), String> {
    type Bits = (Vec<u8>, Vec<Vec<u64>>);
    let bits = |parcel: Parcel| -> Bits {
        let arrays = parcel
            .arrays
            .iter()
            .map(|bulk| bulk.as_slice().iter().map(|v| v.to_bits()).collect())
            .collect();
        (parcel.header, arrays)
    };
    let cancel = Cancel::default();
    let cancelled = |_| "the job was cancelled".to_owned();
    let previews_here = RefCell::new(Vec::<Result<Bits, String>>::new());
    let here = make()
        .run(&Progress::new(&cancel, &|_| {}, &|preview| {
            previews_here.borrow_mut().push(encode(&preview).map(bits));
        }))
        .map_err(cancelled)?;
    let previews_there = RefCell::new(Vec::<Result<Bits, String>>::new());
    let sent = RemoteEntry::of::<J>()
        .run(
            encode(&make())?,
            &Progress::new(&cancel, &|_| {}, &|parcel| {
                let preview = decode::<J::Output>(parcel)
                    .and_then(|p| encode(&p))
                    .map(bits);
                previews_there.borrow_mut().push(preview);
            }),
        )
        .map_err(cancelled)??;
    let there: J::Output = decode(sent)?;
    if bits(encode(&here)?) != bits(encode(&there)?) {
        return Err(format!(
            "{}: the output differs after a trip through parcels",
            J::NAME
        ));
    }
    if previews_here.into_inner() != previews_there.into_inner() {
        return Err(format!(
            "{}: the previews differ after a trip through parcels",
            J::NAME
        ));
    }
    Ok(())
}

/// An array whose values travel as one [`Bulk`] block.
pub trait BulkArray: Sized {
    /// Its shape and values.
    fn to_bulk(&self) -> (Vec<usize>, Bulk);
    /// The array of `shape` holding `values`.
    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String>;
}

fn shaped(shape: Vec<usize>, values: Vec<f64>) -> Result<ArrayD<f64>, String> {
    ArrayD::from_shape_vec(IxDyn(&shape), values)
        .map_err(|error| format!("a bulk array does not have its shape {shape:?}: {error}"))
}

impl BulkArray for ArrayD<f64> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        let values = self.as_standard_layout().iter().copied().collect();
        (self.shape().to_vec(), Bulk::Owned(values))
    }

    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        shaped(shape, values)
    }
}

impl BulkArray for Arc<ArrayD<f64>> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        if self.is_standard_layout() {
            (self.shape().to_vec(), Bulk::Shared(self.clone()))
        } else {
            self.as_ref().to_bulk()
        }
    }

    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        shaped(shape, values).map(Arc::new)
    }
}

impl BulkArray for ndarray::Array2<f64> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        let values = self.as_standard_layout().iter().copied().collect();
        (self.shape().to_vec(), Bulk::Owned(values))
    }

    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        shaped(shape, values)?
            .into_dimensionality()
            .map_err(|error| format!("a bulk array is not a matrix: {error}"))
    }
}

impl BulkArray for ndarray::Array1<f64> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        (
            vec![self.len()],
            Bulk::Owned(self.iter().copied().collect()),
        )
    }

    fn from_bulk(_shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        Ok(ndarray::Array1::from_vec(values))
    }
}

impl BulkArray for Vec<f64> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        (vec![self.len()], Bulk::Owned(self.clone()))
    }

    fn from_bulk(_shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        Ok(values)
    }
}

/// Points of a curve, `[x, y]` each: two floats per point in one block.
impl BulkArray for Vec<[f64; 2]> {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        let values = self.iter().flatten().copied().collect();
        (vec![self.len(), 2], Bulk::Owned(values))
    }

    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        if !values.len().is_multiple_of(2) || shape.iter().product::<usize>() != values.len() {
            return Err(format!(
                "a curve's bulk block of {} values is not of points",
                values.len()
            ));
        }
        Ok(values.chunks_exact(2).map(|p| [p[0], p[1]]).collect())
    }
}

/// Two curves of the same length (a band's low and high lines), in one block.
impl BulkArray for (Vec<[f64; 2]>, Vec<[f64; 2]>) {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        let values = self.0.iter().chain(&self.1).flatten().copied().collect();
        (vec![2, self.0.len(), 2], Bulk::Owned(values))
    }

    fn from_bulk(shape: Vec<usize>, values: Vec<f64>) -> Result<Self, String> {
        let mut points = Vec::<[f64; 2]>::from_bulk(shape, values)?;
        if !points.len().is_multiple_of(2) {
            return Err("a band's bulk block does not hold two curves".to_owned());
        }
        let high = points.split_off(points.len() / 2);
        Ok((points, high))
    }
}

/// `#[serde(with = "crate::jobs::remote::bulk")]` on a field of a [`BulkArray`] type.
pub mod bulk {
    use super::{BulkArray, INCOMING, OUTGOING};
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de, ser};

    pub fn serialize<S: Serializer, A: BulkArray>(
        array: &A,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let (shape, values) = array.to_bulk();
        let index = OUTGOING.with_borrow_mut(|outgoing| {
            outgoing.as_mut().map(|arrays| {
                arrays.push(values);
                arrays.len() - 1
            })
        });
        match index {
            Some(index) => (index, shape).serialize(serializer),
            None => Err(ser::Error::custom(
                "a bulk array is only encoded by jobs::remote::encode",
            )),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, A: BulkArray>(
        deserializer: D,
    ) -> Result<A, D::Error> {
        let (index, shape): (usize, Vec<usize>) = Deserialize::deserialize(deserializer)?;
        let values = INCOMING
            .with_borrow_mut(|incoming| {
                incoming
                    .as_mut()
                    .and_then(|arrays| arrays.get_mut(index))
                    .and_then(Option::take)
            })
            .ok_or_else(|| de::Error::custom(format!("no bulk array {index} in the parcel")))?;
        A::from_bulk(shape, values).map_err(de::Error::custom)
    }
}

/// `#[serde(with = "crate::jobs::remote::bytes")]` on bytes (`Vec<u8>`, `Arc<[u8]>`): one byte
/// string (copied once), not a sequence of numbers.
pub mod bytes {
    use serde::{Deserializer, Serializer, de};

    pub fn serialize<S: Serializer, B: AsRef<[u8]>>(
        bytes: &B,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(bytes.as_ref())
    }

    struct BytesVisitor;

    impl de::Visitor<'_> for BytesVisitor {
        type Value = Vec<u8>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("a byte string")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
            Ok(bytes.to_vec())
        }

        fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Self::Value, E> {
            Ok(bytes)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, B: From<Vec<u8>>>(
        deserializer: D,
    ) -> Result<B, D::Error> {
        deserializer.deserialize_bytes(BytesVisitor).map(B::from)
    }
}

/// `#[serde(with = "crate::jobs::remote::pod_vec")]` on a `Vec` of plain data (a 3D scene's
/// vertices): its bytes as one byte string, not element by element.
pub mod pod_vec {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: bytemuck::Pod>(
        values: &[T],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(bytemuck::cast_slice(values))
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: bytemuck::Pod>(
        deserializer: D,
    ) -> Result<Vec<T>, D::Error> {
        let bytes: Vec<u8> = super::bytes::deserialize(deserializer)?;
        if !bytes.len().is_multiple_of(std::mem::size_of::<T>().max(1)) {
            return Err(serde::de::Error::custom(
                "a byte string that is not whole elements",
            ));
        }
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }
}

/// As [`bytes`], for an `Option` of them.
pub mod bytes_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a, B: AsRef<[u8]>>(#[serde(with = "super::bytes")] &'a B);

    #[derive(Deserialize)]
    struct In<B: From<Vec<u8>>>(#[serde(with = "super::bytes")] B);

    pub fn serialize<S: Serializer, B: AsRef<[u8]>>(
        bytes: &Option<B>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        bytes.as_ref().map(Out).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, B: From<Vec<u8>>>(
        deserializer: D,
    ) -> Result<Option<B>, D::Error> {
        Ok(Option::<In<B>>::deserialize(deserializer)?.map(|In(bytes)| bytes))
    }
}

/// As [`bulk`], for an `Option` of a [`BulkArray`].
pub mod bulk_option {
    use super::BulkArray;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a, A: BulkArray>(#[serde(with = "super::bulk")] &'a A);

    #[derive(Deserialize)]
    struct In<A: BulkArray>(#[serde(with = "super::bulk")] A);

    pub fn serialize<S: Serializer, A: BulkArray>(
        array: &Option<A>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        array.as_ref().map(Out).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, A: BulkArray>(
        deserializer: D,
    ) -> Result<Option<A>, D::Error> {
        Ok(Option::<In<A>>::deserialize(deserializer)?.map(|In(array)| array))
    }
}

impl<A: BulkArray> BulkArray for &A {
    fn to_bulk(&self) -> (Vec<usize>, Bulk) {
        (*self).to_bulk()
    }

    fn from_bulk(_shape: Vec<usize>, _values: Vec<f64>) -> Result<Self, String> {
        Err("a borrowed bulk array cannot be decoded".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ShapeBuilder};
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
        #[serde(with = "bulk")]
        table: Arc<ArrayD<f64>>,
        #[serde(with = "bulk")]
        matrix: Array2<f64>,
        #[serde(with = "bulk_option")]
        curve: Option<Vec<[f64; 2]>>,
        #[serde(with = "bulk_option")]
        none: Option<Vec<f64>>,
        small: Vec<f64>,
        #[serde(with = "bytes_option")]
        file: Option<Arc<[u8]>>,
        #[serde(with = "bytes")]
        pixels: Vec<u8>,
    }

    #[test]
    fn a_parcel_gives_back_every_value_bit_for_bit_and_shares_standard_tables() {
        // Column-major: copied into row-major order on the way.
        let matrix = Array2::from_shape_vec((2, 3).f(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0])
            .expect("a shape of 6");
        let table = Arc::new(
            ArrayD::from_shape_vec(
                IxDyn(&[2, 2, 2]),
                vec![
                    0.0,
                    -0.0,
                    f64::NAN,
                    f64::INFINITY,
                    1e-310,
                    -1.5,
                    f64::MAX,
                    7.0,
                ],
            )
            .expect("a shape of 8"),
        );
        let sample = Sample {
            name: "a table".to_owned(),
            table: table.clone(),
            matrix,
            curve: Some(vec![[0.0, 1.0], [2.0, 3.0]]),
            none: None,
            small: vec![0.1, 0.2],
            file: Some(Arc::from(&b"\x93NUMPY\x00\xff"[..])),
            pixels: vec![0, 255, 7],
        };
        let parcel = encode(&sample).expect("encodes");
        assert_eq!(
            parcel.arrays.len(),
            3,
            "the table, the matrix and the curve"
        );
        assert!(matches!(&parcel.arrays[0], Bulk::Shared(shared) if Arc::ptr_eq(shared, &table)));
        assert_eq!(parcel.arrays[1].as_slice(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let back: Sample = decode(parcel).expect("decodes");
        let bits = |a: &ArrayD<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.table), bits(&sample.table));
        assert_eq!(back.table.shape(), &[2, 2, 2]);
        assert_eq!(back.matrix, sample.matrix);
        assert_eq!(back.curve, sample.curve);
        assert_eq!(back.none, None);
        assert_eq!(back.small, sample.small);
        assert_eq!(back.name, sample.name);
        assert_eq!(back.file, sample.file);
        assert_eq!(back.pixels, sample.pixels);
    }

    #[test]
    fn a_bulk_array_outside_a_parcel_or_missing_from_one_is_an_error_not_a_panic() {
        #[derive(Serialize, Deserialize)]
        struct One(#[serde(with = "bulk")] Vec<f64>);
        assert!(postcard::to_allocvec(&One(vec![1.0])).is_err());
        let mut parcel = encode(&One(vec![1.0])).expect("encodes");
        parcel.arrays.clear();
        let error = decode::<One>(parcel).err().expect("no array to read");
        // postcard keeps no custom message: the error says which step failed.
        assert!(error.contains("could not be read"), "{error}");
        let truncated = Parcel {
            header: vec![],
            arrays: vec![],
        };
        assert!(decode::<Sample>(truncated).is_err());
    }
}
