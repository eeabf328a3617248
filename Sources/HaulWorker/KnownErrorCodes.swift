import HaulArchive
import HaulCore
import HaulS3

extension HaulError.Code {
    /// Every code Haul's modules declare: what a code stored in `transfers.error_code` is read
    /// back among (`HaulError.Code(stored:among:)`), so that it keeps its exit status.
    public static let known: [Self] = coreCodes + archiveCodes + s3Codes
}
